package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentharness/harness"
)

// ocMessage is the JSON of a message row: a user input or one assistant
// response (in opencode 1.18, one per model call; older versions kept
// several steps in one).
type ocMessage struct {
	Role    string `json:"role"`
	ModelID string `json:"modelID"`
	// Summary is true on the assistant message that holds a
	// compaction's summary (a user message has an object here).
	Summary json.RawMessage `json:"summary"`
	Error   json.RawMessage `json:"error"`
	Time    struct {
		Created   int64 `json:"created"`
		Completed int64 `json:"completed"`
	} `json:"time"`
	Tokens *ocTokens `json:"tokens"`
}

// ocTokens is opencode's usage: input excludes the cache's reads and
// writes, which it counts apart.
type ocTokens struct {
	Input     int `json:"input"`
	Output    int `json:"output"`
	Reasoning int `json:"reasoning"`
	Cache     struct {
		Read  int `json:"read"`
		Write int `json:"write"`
	} `json:"cache"`
}

// usage is harness's form of the tokens: Input counts every input token.
func (t *ocTokens) usage() harness.Usage {
	return harness.Usage{Input: t.Input + t.Cache.Read + t.Cache.Write, Cached: t.Cache.Read, CacheWrite: t.Cache.Write, Output: t.Output}
}

// ocPart is the JSON of a part row.
type ocPart struct {
	Type      string       `json:"type"`
	Text      string       `json:"text"`
	Synthetic bool         `json:"synthetic"`
	Ignored   bool         `json:"ignored"`
	Mime      string       `json:"mime"`
	Tool      string       `json:"tool"`
	CallID    string       `json:"callID"`
	State     *ocToolState `json:"state"`
	Tokens    *ocTokens    `json:"tokens"`
	// TailStartID is, on a compaction part, the first message opencode
	// keeps after the summary.
	TailStartID string `json:"tail_start_id"`
}

type ocToolState struct {
	Status   string          `json:"status"`
	Input    json.RawMessage `json:"input"`
	Output   string          `json:"output"`
	Error    string          `json:"error"`
	Metadata struct {
		OutputPath string `json:"outputPath"`
		Truncated  bool   `json:"truncated"`
	} `json:"metadata"`
	Time struct {
		Compacted int64 `json:"compacted"`
	} `json:"time"`
	Attachments []json.RawMessage `json:"attachments"`
}

// ocInterrupted is what opencode sends for a tool call that never
// finished (the session was stopped).
const ocInterrupted = "[Tool execution was interrupted]"

// ocCompactionPrompt is the user message opencode sends, after a
// compaction, in front of the summary.
const ocCompactionPrompt = "What did we do so far?"

// ocSavedRE finds the file opencode saved a cut output to, in the text it
// sent instead ("Full output saved to: PATH" from its shell tool, "full
// content saved to PATH ..." from the others).
var ocSavedRE = regexp.MustCompile(`(?i)full (?:output|content) saved to:? (\S+)`)

// ocBuilder builds the recordings of one session.
type ocBuilder struct {
	name      string
	recs      []*Recording
	rec       *Recording
	msgs      int
	readSaved func(string) (string, bool)
	// rendered is each message of the session so far, as text, for the
	// messages a compaction keeps after its summary.
	rendered []ocRendered
	// compaction is the tail_start_id of a compaction request waiting for
	// its summary, and compacting whether one is.
	compaction string
	compacting bool
	// counts is what the warnings of each of recs report.
	counts []ocCounts
}

// ocCounts are the counts a recording's warnings report.
type ocCounts struct {
	cut, readBack, reasoning, attachments, failed, pruned, summaries int
}

// n is the counts of the context being built.
func (b *ocBuilder) n() *ocCounts { return &b.counts[len(b.counts)-1] }

type ocRendered struct{ id, text string }

// buildOpencode builds the recordings of session s from its message rows
// and their parts (by message id). readSaved reads back a cut output's
// saved file.
func buildOpencode(path string, s ocSession, msgs []ocRow, parts map[string][]ocRow, readSaved func(string) (string, bool)) ([]*Recording, error) {
	b := &ocBuilder{name: path + "#" + s.ID, readSaved: readSaved}
	b.start()
	for _, m := range msgs {
		if err := b.message(m, parts[m.ID]); err != nil {
			return nil, err
		}
	}
	out := ocRecordings(path, s, b)
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %w", b.name, ErrNoModelCall)
	}
	return out, nil
}

// start begins a model context: the session's, or one after a compaction.
func (b *ocBuilder) start() {
	b.rec = &Recording{Format: formatOpencode}
	if len(b.recs) > 0 {
		b.rec.Model = b.recs[len(b.recs)-1].Model
	}
	b.recs = append(b.recs, b.rec)
	b.counts = append(b.counts, ocCounts{})
	b.msgs = 0
}

// message adds one message row with its parts.
func (b *ocBuilder) message(row ocRow, rows []ocRow) error {
	var m ocMessage
	if err := json.Unmarshal([]byte(row.Data), &m); err != nil {
		return fmt.Errorf("%s: message %s: %w", b.name, row.ID, err)
	}
	parts := make([]ocPart, len(rows))
	for i, r := range rows {
		if err := json.Unmarshal([]byte(r.Data), &parts[i]); err != nil {
			return fmt.Errorf("%s: message %s: part %s: %w", b.name, row.ID, r.ID, err)
		}
	}
	switch m.Role {
	case "user":
		b.user(row.ID, parts)
	case "assistant":
		if bytes.Equal(bytes.TrimSpace(m.Summary), []byte("true")) {
			b.summary(parts)
			return nil
		}
		b.assistant(row, &m, rows, parts)
	}
	return nil
}

// user adds a user message: a new turn, or a compaction request (whose
// summary starts a new context).
func (b *ocBuilder) user(id string, parts []ocPart) {
	var texts []string
	for _, p := range parts {
		switch p.Type {
		case "compaction":
			b.compaction, b.compacting = p.TailStartID, true
			return
		case "text":
			if !p.Ignored {
				texts = append(texts, p.Text)
			}
		case "file":
			// A text file or folder the user attached was sent as the
			// synthetic text part beside it; anything else is left out.
			if !strings.HasPrefix(p.Mime, "text/") && p.Mime != "application/x-directory" {
				b.n().attachments++
			}
		}
	}
	input := strings.Join(texts, "\n")
	b.msgs++
	b.rendered = append(b.rendered, ocRendered{id, "[User]: " + input})
	// Inputs no model call answered in between are one turn, each sent
	// as a message of its own (opencode's "Continue" after a compaction's
	// summary, a prompt sent while the last one was still queued).
	if n := len(b.rec.Turns); n > 0 && len(b.rec.Turns[n-1].Calls) == 0 {
		t := b.rec.Turns[n-1]
		t.Context = append(t.Context, harness.ContextMessage{Text: input, AfterInput: true})
		return
	}
	b.rec.Turns = append(b.rec.Turns, &Turn{Input: input})
}

// summary ends the context at a compaction: the next starts from the
// summary and the messages opencode kept after it, as one input.
func (b *ocBuilder) summary(parts []ocPart) {
	var texts []string
	for _, p := range parts {
		if p.Type == "text" && !p.Ignored {
			texts = append(texts, p.Text)
		}
	}
	text := strings.Join(texts, "\n")
	if !b.compacting || strings.TrimSpace(text) == "" {
		b.n().failed++
		return
	}
	b.n().summaries++
	var tail []string
	if i := slices.IndexFunc(b.rendered, func(r ocRendered) bool { return r.id == b.compaction }); b.compaction != "" && i >= 0 {
		for _, r := range b.rendered[i:] {
			tail = append(tail, r.text)
		}
	}
	b.compaction, b.compacting = "", false
	b.start()
	b.rec.Turns = append(b.rec.Turns, &Turn{Input: joinNonEmpty(ocCompactionPrompt, text, strings.Join(tail, "\n\n"))})
	b.msgs = 2
}

// assistant adds an assistant message: one call per step.
func (b *ocBuilder) assistant(row ocRow, m *ocMessage, rows []ocRow, parts []ocPart) {
	if m.ModelID != "" {
		b.rec.Model = m.ModelID
	}
	steps := ocSteps(parts)
	var rendered []string
	added := 0
	for _, st := range steps {
		c, text := b.step(rows, parts, st)
		if c == nil {
			continue
		}
		added++
		if c.Time.IsZero() {
			c.Time = ocTime(m.Time.Completed, m.Time.Created)
		}
		if !c.HasUsage && len(steps) == 1 && m.Tokens != nil {
			c.Usage, c.HasUsage = m.Tokens.usage(), true
		}
		rendered = append(rendered, text)
	}
	if added == 0 && len(m.Error) > 0 && string(m.Error) != "null" {
		b.n().failed++
	}
	if len(rendered) > 0 {
		b.rendered = append(b.rendered, ocRendered{row.ID, strings.Join(rendered, "\n\n")})
	}
}

// ocSteps splits a message's parts at each step-start: the index ranges of
// its model calls.
func ocSteps(parts []ocPart) [][2]int {
	var out [][2]int
	start := 0
	for i, p := range parts {
		if p.Type == "step-start" && i > start {
			out = append(out, [2]int{start, i})
			start = i
		}
	}
	return append(out, [2]int{start, len(parts)})
}

// step makes the call of parts[st[0]:st[1]], or nil for a step with no
// answer and no tool call; text is the step as a compaction's tail renders
// it.
func (b *ocBuilder) step(rows []ocRow, parts []ocPart, st [2]int) (*Call, string) {
	c := &Call{Request: b.msgs, Assistant: harness.Message{Role: harness.RoleAssistant}}
	var text []string
	for i := st[0]; i < st[1]; i++ {
		p := parts[i]
		switch p.Type {
		case "text":
			if p.Ignored || p.Text == "" {
				continue
			}
			c.Assistant.Parts = append(c.Assistant.Parts, harness.TextPart(p.Text))
			text = append(text, "[Assistant]: "+p.Text)
		case "reasoning":
			b.n().reasoning++
		case "tool":
			if r := b.tool(c, p); r != nil {
				text = append(text, fmt.Sprintf("[Assistant tool call]: %s(%s)\n[Tool result]: %s", p.Tool, c.Assistant.ToolCalls[len(c.Assistant.ToolCalls)-1].Args, r.Shown))
			}
		case "step-finish":
			if p.Tokens != nil {
				c.Usage, c.HasUsage = p.Tokens.usage(), true
			}
			c.Time = ocTime(rows[i].Created)
		}
	}
	if len(c.Assistant.Parts) == 0 && len(c.Assistant.ToolCalls) == 0 {
		return nil, ""
	}
	if len(b.rec.Turns) == 0 {
		b.rec.Turns = append(b.rec.Turns, &Turn{})
	}
	t := b.rec.Turns[len(b.rec.Turns)-1]
	t.Calls = append(t.Calls, c)
	b.msgs += 1 + len(c.Results)
	return c, strings.Join(text, "\n")
}

// tool adds a tool part's call to c and its result, as opencode sent it.
func (b *ocBuilder) tool(c *Call, p ocPart) *Result {
	if p.State == nil || p.CallID == "" {
		return nil
	}
	args := json.RawMessage(bytes.TrimSpace(p.State.Input))
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	c.Assistant.ToolCalls = append(c.Assistant.ToolCalls, harness.ToolCall{ID: p.CallID, Name: p.Tool, Args: args})
	r := &Result{CallID: p.CallID, Tool: p.Tool}
	switch p.State.Status {
	case "completed":
		r.Shown = p.State.Output
	case "error":
		r.Shown, r.IsError = p.State.Error, true
	default: // pending or running: the session stopped first
		r.Shown, r.IsError = ocInterrupted, true
	}
	b.n().attachments += len(p.State.Attachments)
	if p.State.Time.Compacted != 0 {
		b.n().pruned++
	}
	full := r.Shown
	if saved := ocSavedPath(p.State, r.Shown); saved != "" {
		b.n().cut++
		if text, ok := b.readSaved(saved); ok {
			full = text
			b.n().readBack++
		}
	}
	if full != "" {
		r.Full = []harness.Part{harness.TextPart(full)}
	}
	c.Results = append(c.Results, r)
	return r
}

// ocSavedPath is the file a cut output was saved to, or "" for an output
// opencode did not cut.
func ocSavedPath(st *ocToolState, shown string) string {
	if st.Metadata.Truncated && st.Metadata.OutputPath != "" {
		return st.Metadata.OutputPath
	}
	if !strings.Contains(shown, "output truncated") {
		return ""
	}
	if m := ocSavedRE.FindStringSubmatch(shown); m != nil {
		return m[1]
	}
	return ""
}

// readSavedOutput reads a file opencode saved a cut output to: a regular
// file of at most 64 MiB of UTF-8.
func readSavedOutput(path string) (string, bool) {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() > 64<<20 {
		return "", false
	}
	b, err := os.ReadFile(path)
	if err != nil || !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
}

// ocTime is the first non-zero of the Unix-millisecond times, or zero.
func ocTime(ms ...int64) time.Time {
	for _, t := range ms {
		if t > 0 {
			return time.UnixMilli(t).UTC()
		}
	}
	return time.Time{}
}

// warnings are the caveats of part i of n of session s, with counts c.
func (c ocCounts) warnings(s ocSession, i, n int) []string {
	w := []string{notRecorded(formatOpencode, true, true)}
	if n > 1 {
		w = append(w, fmt.Sprintf("the session was compacted: this is part %d of %d, each after a compaction starting from its summary (and the messages opencode kept after it) as one input", i+1, n))
	}
	if c.summaries > 0 {
		w = append(w, fmt.Sprintf("%d compaction summary requests left out (another prompt, no tools; not part of either context)", c.summaries))
	}
	if c.cut > 0 {
		w = append(w, fmt.Sprintf("%d results were cut by opencode itself (over 50 KB or 2,000 lines, the rest saved to a file): recorded as the model saw them, the full text read back from %d saved files that still exist", c.cut, c.readBack))
	}
	if c.pruned > 0 {
		w = append(w, fmt.Sprintf("%d results were later cleared by opencode's pruning (\"[Old tool result content cleared]\" from a request the session does not record): recorded whole", c.pruned))
	}
	if c.reasoning > 0 {
		w = append(w, fmt.Sprintf("%d reasoning parts left out (their tokens are in the recorded usage)", c.reasoning))
	}
	if c.attachments > 0 {
		w = append(w, fmt.Sprintf("%d attachments (images, PDFs) left out", c.attachments))
	}
	if c.failed > 0 {
		w = append(w, fmt.Sprintf("%d assistant messages that failed without output (or compactions without a summary) left out", c.failed))
	}
	if s.Parent != "" {
		w = append(w, "a subagent's session (opencode's task tool) of session "+s.Parent)
	}
	return w
}
