package proxy

import (
	"bytes"
	"context"
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentharness/harness/provider/catalog"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/tokens"
)

// savings counts, off the request path, the tokens each forwarded call's
// cuts removed, and keeps them: in the store when it keeps savings
// (store.SavingsLog), so they outlive the process, and in memory
// otherwise, grouped by day, client, project and model. One goroutine at
// a time counts, so the memo needs no lock of its own.
type savings struct {
	log  store.SavingsLog // nil: memory only
	logf func(string, ...any)
	seed maphash.Seed

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []pendingSaving
	running bool
	// mem holds the savings of a proxy without a store, one entry per
	// (day, client, project, model), summed.
	mem   map[savingKey]*countedSaving
	count tokens.Counter

	// memo remembers the token count of a replaced text by its hash
	// (bounded: cleared when full); projects the working directory found
	// for each conversation.
	memo     map[uint64]int64
	projects map[string]string
}

// savingKey groups the in-memory savings.
type savingKey struct{ day, client, project, model string }

// memoEntries bounds savings.memo and savings.projects.
const memoEntries = 1 << 16

// pendingSaving is one finished call waiting to be counted: its edits
// refer to the request body as received (in, held in buf).
type pendingSaving struct {
	s     store.Saving
	in    []byte
	buf   *bodyBuf
	edits []edit
}

func newSavings(log store.SavingsLog, logf func(string, ...any)) *savings {
	s := &savings{log: log, logf: logf, seed: maphash.MakeSeed(), mem: map[savingKey]*countedSaving{},
		memo: map[uint64]int64{}, projects: map[string]string{}}
	s.cond = sync.NewCond(&s.mu)
	if bpe, err := tokens.O200k(); err == nil {
		s.count = bpe
	} else {
		s.count = tokens.CounterFunc(func(t string) int { return (len(t) + 3) / 4 })
	}
	return s
}

// add queues the saving of a finished call.
func (s *savings) add(c *call, rep *reply, ok bool, at time.Time) {
	v := store.Saving{At: at, Client: c.client, Model: c.req.Model, BytesIn: int64(len(c.in)), BytesOut: int64(c.outLen())}
	if c.conv != nil {
		v.Conversation = c.conv.id
	}
	if ok {
		v.Input, v.Cached, v.Output = int64(rep.Usage.Input), int64(rep.Usage.Cached), int64(rep.Usage.Output)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, pendingSaving{s: v, in: c.in, buf: c.buf.hold(), edits: c.edits})
	if !s.running {
		s.running = true
		go s.run()
	}
}

// run counts and keeps the queued savings until the queue is empty.
func (s *savings) run() {
	for {
		s.mu.Lock()
		batch := s.queue
		s.queue = nil
		if len(batch) == 0 {
			s.running = false
			s.cond.Broadcast()
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		for _, p := range batch {
			v := p.s
			v.TokensSaved = s.saved(p.in, p.edits)
			v.Project = s.project(v.Conversation, p.in)
			p.buf.release()
			s.keep(v)
		}
	}
}

// keep stores v, or sums it in memory without a store.
func (s *savings) keep(v store.Saving) {
	if s.log != nil {
		if err := s.log.AddSaving(context.Background(), v); err != nil {
			s.logf("harness proxy: recording a saving: %v", err)
		}
		return
	}
	k := savingKey{v.At.Local().Format(time.DateOnly), v.Client, v.Project, v.Model}
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := s.mem[k]
	if sum == nil {
		sum = &countedSaving{Saving: store.Saving{At: v.At, Client: v.Client, Project: v.Project, Model: v.Model}}
		s.mem[k] = sum
	}
	sum.calls++
	sum.BytesIn += v.BytesIn
	sum.BytesOut += v.BytesOut
	sum.TokensSaved += v.TokensSaved
	sum.Input += v.Input
	sum.Cached += v.Cached
	sum.Output += v.Output
}

// flush waits until every queued saving is kept.
func (s *savings) flush(ctx context.Context) error {
	return waitUntil(ctx, &s.mu, s.cond, func() bool { return !s.running && len(s.queue) == 0 })
}

// report sums the savings kept: the store's, or without a store the
// in-memory sums (one per day, client, project and model); keep, when not
// nil, says which conversations the caller may see (a tenant its own).
func (s *savings) report(ctx context.Context, prices *catalog.Prices, keep func(conv string) bool) (SavingsReport, error) {
	if s.log != nil {
		rows, err := s.log.Savings(ctx, time.Time{})
		if err != nil {
			return SavingsReport{}, err
		}
		if keep != nil {
			kept := rows[:0]
			for _, r := range rows {
				if keep(r.Conversation) {
					kept = append(kept, r)
				}
			}
			rows = kept
		}
		return SummarizeSavings(rows, prices, time.Local), nil
	}
	s.mu.Lock()
	rows := make([]countedSaving, 0, len(s.mem))
	for _, v := range s.mem {
		if keep == nil || keep(v.Conversation) {
			rows = append(rows, *v)
		}
	}
	s.mu.Unlock()
	return summarizeCounted(rows, prices, time.Local), nil
}

// saved counts the tokens the edits removed: each replaced text's
// tokens minus its replacement's, JSON strings counted as the text they
// hold.
func (s *savings) saved(in []byte, edits []edit) int64 {
	var n int64
	for _, e := range edits {
		if e.Span.Start < 0 || e.Span.End > len(in) || e.Span.Start > e.Span.End {
			continue
		}
		var was int64
		if e.Tokens != nil {
			was = atomic.LoadInt64(e.Tokens)
		}
		if was == 0 {
			was = s.tokensOf(in[e.Span.Start:e.Span.End])
		}
		n += was - s.tokensOf(e.New)
	}
	return n
}

// tokensOf counts b's tokens, remembering the count by b's hash.
func (s *savings) tokensOf(b []byte) int64 {
	if len(b) == 0 {
		return 0
	}
	h := maphash.Bytes(s.seed, b)
	if n, ok := s.memo[h]; ok {
		return n
	}
	n := countLiteral(s.count, b)
	if len(s.memo) >= memoEntries {
		clear(s.memo)
	}
	s.memo[h] = n
	return n
}

// countLiteral counts b's tokens, a JSON string counted as the text it
// holds. count is safe for concurrent use, so the request path may call
// it (claimDecisions) while the savings goroutine counts.
func countLiteral(count tokens.Counter, b []byte) int64 {
	text := string(b)
	if len(b) > 1 && b[0] == '"' {
		if str, err := unquote(b); err == nil {
			text = str
		}
	}
	return int64(count.Count(text))
}

// project returns the working directory of conversation conv, found in
// its request body the first time.
func (s *savings) project(conv string, body []byte) string {
	if p, ok := s.projects[conv]; ok && conv != "" {
		return p
	}
	p := projectOf(body)
	if len(s.projects) >= memoEntries {
		clear(s.projects)
	}
	s.projects[conv] = p
	return p
}

// workdirMarks are what each client writes before its working directory
// in the JSON of its requests: Claude Code's system prompt, Codex's
// environment context, Gemini CLI's session context, opencode's system
// prompt.
var workdirMarks = [][]byte{
	[]byte(`Primary working directory: `),
	[]byte(`<cwd>`),
	[]byte(`Workspace Directories:**\n  - `),
	[]byte(`Working directory: `),
}

// projectOf returns the client's working directory as its request states
// it, or "".
func projectOf(body []byte) string {
	for _, m := range workdirMarks {
		i := bytes.Index(body, m)
		if i < 0 {
			continue
		}
		rest := body[i+len(m):]
		end := 0
		for end < len(rest) {
			c := rest[end]
			if c == '"' || c == '<' || c == '\n' || (c == '\\' && end+1 < len(rest) && rest[end+1] != '\\') {
				break
			}
			if c == '\\' {
				end++ // an escaped backslash (a Windows path)
			}
			end++
		}
		if p := strings.ReplaceAll(strings.TrimSpace(string(rest[:min(end, len(rest))])), `\\`, `\`); isPath(p) {
			return p
		}
	}
	return ""
}

// isPath reports whether p looks like an absolute folder path (/…, ~…,
// C:\…), not a placeholder a prompt template left ($, {cwd}).
func isPath(p string) bool {
	switch {
	case p == "" || len(p) > 4096:
		return false
	case p[0] == '/' || p[0] == '~':
		return true
	}
	return len(p) > 2 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') && (p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z')
}

// clientName names the agent that sent a request, by its User-Agent, or
// by the wire format when the agent is not one harness knows.
func clientName(userAgent string, f wireFormat) string {
	ua := strings.ToLower(userAgent)
	switch {
	case strings.HasPrefix(ua, "claude-cli/") || strings.HasPrefix(ua, "claude-code/"):
		return "claude-code"
	case strings.HasPrefix(ua, "codex"):
		return "codex"
	case strings.HasPrefix(ua, "geminicli/") || strings.Contains(ua, "gemini-cli"):
		return "gemini-cli"
	case strings.HasPrefix(ua, "opencode/"):
		return "opencode"
	}
	return f.name()
}
