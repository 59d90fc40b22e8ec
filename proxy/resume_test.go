package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/sqlite"
)

// node is one proxy process: its own store.DB on the shared database
// file, its proxy and its server, in front of the shared upstream.
type node struct {
	t   *testing.T
	st  store.DB
	px  *Proxy
	srv *httptest.Server
	log *syncWriter
	// closed is set once close has run.
	closed bool
}

// startNode starts a proxy on the database file db. The node is closed
// at the end of the test unless the test closed it (a clean restart) or
// abandoned it (a crash: its store keeps its lease).
func startNode(t *testing.T, up *wiretest.Server, db, ws string, so *sqlite.Options) *node {
	t.Helper()
	st, err := sqlite.Open(context.Background(), db, so)
	if err != nil {
		t.Fatal(err)
	}
	n := &node{t: t, st: st, log: &syncWriter{w: &bytes.Buffer{}}}
	n.px, err = New(&Options{Upstream: up.URL, Store: st, Workspace: ws, Log: n.log})
	if err != nil {
		t.Fatal(err)
	}
	n.srv = httptest.NewServer(n.px)
	t.Cleanup(func() { n.close() })
	return n
}

// close stops the node as a clean shutdown does: server, proxy, store.
func (n *node) close() {
	if n.closed {
		return
	}
	n.closed = true
	n.srv.Close()
	if err := n.px.Close(); err != nil {
		n.t.Errorf("closing the proxy: %v", err)
	}
	n.st.Close()
}

// post sends body as a client would and returns the status.
func (n *node) post(path string, body []byte) int {
	n.t.Helper()
	resp, err := http.Post(n.srv.URL+path, "application/json", bytes.NewReader(body))
	if err != nil {
		n.t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		n.t.Fatal(err)
	}
	return resp.StatusCode
}

// flush waits until everything the node observed is in the store. The
// bound only catches a hang.
func (n *node) flush() {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := n.px.Flush(ctx); err != nil {
		n.t.Fatalf("flush: %v", err)
	}
}

// scriptTurn is one turn a client plays: its prompt, the tool rounds and
// the final answer.
type scriptTurn struct {
	prompt string
	steps  []step
	answer string
}

// exchange is one request of the client and the upstream's answer to it.
type exchange struct {
	body  []byte
	reply wiretest.Reply
}

// anthropicHistory is a Messages API body for the whole history: every
// turn before the last complete (its rounds and answer), the last one up
// to its first done steps.
func anthropicHistory(turns []scriptTurn, done int) []byte {
	var msgs []string
	user := func(content string) {
		msgs = append(msgs, `{"role":"user","content":`+content+`}`)
	}
	for ti, tn := range turns {
		user(`[{"type":"text","text":` + mustJSON(tn.prompt) + `}]`)
		steps := tn.steps
		if ti == len(turns)-1 {
			steps = steps[:done]
		}
		for _, s := range steps {
			msgs = append(msgs, `{"role":"assistant","content":[{"type":"tool_use","id":`+mustJSON(s.id)+`,"name":`+mustJSON(s.tool)+`,"input":`+s.args+`}]}`)
			user(`[{"type":"tool_result","tool_use_id":` + mustJSON(s.id) + `,"content":` + mustJSON(s.result) + `}]`)
		}
		if ti < len(turns)-1 {
			msgs = append(msgs, `{"role":"assistant","content":[{"type":"text","text":`+mustJSON(tn.answer)+`}]}`)
		}
	}
	return []byte(`{"model":"m","max_tokens":1024,"stream":true,"system":[{"type":"text","text":"You are a test agent."}],` +
		`"tools":[{"name":"Bash","description":"run","input_schema":{"type":"object"}}],"messages":[` + strings.Join(msgs, ",") + `]}`)
}

// playScript lists the exchanges of a client playing turns in order: per
// turn, one request per step and one for the answer.
func playScript(turns []scriptTurn) []exchange {
	var out []exchange
	u := wiretest.Usage{Input: 100, Output: 10}
	for ti, tn := range turns {
		for done := 0; done <= len(tn.steps); done++ {
			var reply wiretest.Reply
			if done < len(tn.steps) {
				s := tn.steps[done]
				reply = wiretest.AnthropicStream("m", "", []wiretest.Call{{ID: s.id, Name: s.tool, Args: s.args}}, u)
			} else {
				reply = wiretest.AnthropicStream("m", tn.answer, nil, u)
			}
			out = append(out, exchange{body: anthropicHistory(turns[:ti+1], done), reply: reply})
		}
	}
	return out
}

// resumeScript is the client of the resume tests: a turn of three tool
// rounds and an answer (exchanges 0–3), then a turn answered at once
// (exchange 4).
var resumeScript = []scriptTurn{
	{prompt: "Which version of zod is pinned?", answer: "zod is at 1.10.0.", steps: []step{
		{id: "c1", tool: "Bash", args: `{"command":"ls"}`, result: "package-lock.json\n"},
		{id: "c2", tool: "Bash", args: `{"command":"grep -n zod package-lock.json"}`, result: "812: \"node_modules/zod\": {\n"},
		{id: "c3", tool: "Bash", args: `{"command":"sed -n 813p package-lock.json"}`, result: "\"version\": \"1.10.0\",\n"},
	}},
	{prompt: "Thanks. And react?", answer: "react is not in the lock file."},
}

// wantTranscript checks the stored conversation against resumeScript:
// both turns answered, every round once in order with its calls and
// results, nothing interrupted. The store holds forks more conversations
// besides, each named by the conversation's id and a suffix.
func wantTranscript(t *testing.T, st store.DB, forks int) {
	t.Helper()
	ctx := context.Background()
	list, err := st.List(ctx)
	if err != nil || len(list) != 1+forks {
		t.Fatalf("store lists %d conversations (err %v), want %d", len(list), err, 1+forks)
	}
	slices.SortFunc(list, func(a, b store.Summary) int { return len(a.ID) - len(b.ID) })
	conv, err := st.Load(ctx, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(conv.Turns) != len(resumeScript) {
		t.Fatalf("stored %d turns (rounds %v), want %d", len(conv.Turns), roundsOf(conv), len(resumeScript))
	}
	for ti, want := range resumeScript {
		got := conv.Turns[ti]
		if got.Outcome != harness.Answered {
			t.Errorf("turn %d: outcome %q, want answered", ti+1, got.Outcome)
		}
		if got.Answer() != want.answer {
			t.Errorf("turn %d: answer %q, want %q", ti+1, got.Answer(), want.answer)
		}
		var calls []string
		for ri, r := range got.Rounds {
			if r.Index != ri+1 {
				t.Errorf("turn %d: round %d stored as round %d", ti+1, ri+1, r.Index)
			}
			for _, c := range r.Assistant.ToolCalls {
				calls = append(calls, c.ID)
			}
			for _, res := range r.Results {
				calls = append(calls, res.CallID+"=")
			}
		}
		var wantCalls []string
		for _, s := range want.steps {
			wantCalls = append(wantCalls, s.id, s.id+"=")
		}
		if fmt.Sprint(calls) != fmt.Sprint(wantCalls) || len(got.Rounds) != len(want.steps)+1 {
			t.Errorf("turn %d: %d rounds, calls and results %v, want %d rounds, %v", ti+1, len(got.Rounds), calls, len(want.steps)+1, wantCalls)
		}
	}
}

// resumeEnv is the shared upstream and database file of one case.
type resumeEnv struct {
	t      *testing.T
	up     *wiretest.Server
	ws, db string
	ex     []exchange
	// forks is how many forks of the conversation the case makes.
	forks int
}

// node starts a proxy process on the case's database file.
func (e *resumeEnv) node(so *sqlite.Options) *node { return startNode(e.t, e.up, e.db, e.ws, so) }

// serve plays exchanges is through n: the upstream's answer is queued and
// the client must get a 200 whatever the store does.
func (e *resumeEnv) serve(n *node, is ...int) {
	e.t.Helper()
	for _, i := range is {
		e.up.Enqueue(e.ex[i].reply)
		if s := n.post("/v1/messages", e.ex[i].body); s != 200 {
			e.t.Fatalf("exchange %d: status %d", i, s)
		}
	}
}

// crashed is a lease that never expires for a live process (pid) and one
// that is expired at once, for a store that dies holding it.
var crashed = &sqlite.Options{LeaseTTL: time.Nanosecond}

// TestResumeAcrossProxies: the client plays resumeScript (a turn of three
// tool rounds and an answer, then a second turn) while proxies on one
// database file restart, die or run side by side. The stored transcript
// is always the one a single proxy records: both turns answered, every
// round once, nothing interrupted, no write failed; every client request
// is answered.
func TestResumeAcrossProxies(t *testing.T) {
	cases := []struct {
		name string
		play func(e *resumeEnv) []*node
	}{
		{"restart mid-turn, crashed while writing", func(e *resumeEnv) []*node {
			a := e.node(crashed)
			e.serve(a, 0, 1)
			a.flush()
			holdClaim(e.t, a.st) // a dies holding the conversation
			b := e.node(nil)
			e.serve(b, 2, 3, 4)
			return []*node{b}
		}},
		{"restart mid-turn, crashed between writes", func(e *resumeEnv) []*node {
			// a's lease would outlive the test, but a holds none between
			// writes: b resumes the turn at once.
			a := e.node(nil)
			e.serve(a, 0, 1)
			a.flush()
			b := e.node(nil)
			e.serve(b, 2, 3, 4)
			b.flush()
			if r := b.px.Stats().RecordRetries; r != 0 {
				e.t.Errorf("b waited %d times for a's claim", r)
			}
			return []*node{b}
		}},
		{"restart mid-turn, closed", func(e *resumeEnv) []*node {
			a := e.node(nil)
			e.serve(a, 0, 1)
			a.close()
			b := e.node(nil)
			e.serve(b, 2, 3, 4)
			return []*node{b}
		}},
		{"restart mid-turn, turn marked interrupted meanwhile", func(e *resumeEnv) []*node {
			a := e.node(crashed)
			e.serve(a, 0, 1)
			a.flush()
			holdClaim(e.t, a.st)
			markInterrupted(e.t, e.db)
			b := e.node(nil)
			e.serve(b, 2, 3, 4)
			return []*node{b}
		}},
		{"restart between turns", func(e *resumeEnv) []*node {
			a := e.node(nil)
			e.serve(a, 0, 1, 2, 3)
			a.close()
			b := e.node(nil)
			e.serve(b, 4)
			return []*node{b}
		}},
		{"re-sent ended turn after a restart", func(e *resumeEnv) []*node {
			a := e.node(nil)
			e.serve(a, 0, 1, 2, 3)
			a.close()
			b := e.node(nil)
			e.serve(b, 3) // the client retries the answered request
			// A client that goes on with the ended turn: a fork, recorded
			// as a conversation of its own; the ended turn stays as it was.
			fork := append(append([]step(nil), resumeScript[0].steps...),
				step{id: "c4", tool: "Bash", args: `{}`, result: "x"}, step{id: "c5", tool: "Bash", args: `{}`, result: "y"})
			e.up.Enqueue(e.ex[3].reply)
			if s := b.post("/v1/messages", anthropicHistory([]scriptTurn{{prompt: resumeScript[0].prompt, steps: fork}}, len(fork))); s != 200 {
				e.t.Fatalf("forked request: status %d", s)
			}
			b.flush()
			if !strings.Contains(b.log.String(), " forks from ") || strings.Contains(b.log.String(), "warning") {
				e.t.Errorf("no fork notice, or a warning, for the forked turn:\n%s", b.log.String())
			}
			e.forks = 1
			e.serve(b, 4)
			return []*node{b}
		}},
		{"re-sent turn another proxy ended", func(e *resumeEnv) []*node {
			// Each proxy's memory of turn 1 is behind the store when the
			// client comes back: a's round 1 is refused as stored (b
			// stored it) and skipped; b, sent the answered request again,
			// is refused the ended turn and stores nothing twice.
			a, b := e.node(nil), e.node(nil)
			e.serve(a, 0)
			a.flush()
			e.serve(b, 1)
			b.flush()
			e.serve(a, 2, 3)
			a.flush()
			e.serve(b, 3, 4)
			return []*node{a, b}
		}},
		{"two proxies on one file, alternating", func(e *resumeEnv) []*node {
			a, b := e.node(nil), e.node(nil)
			e.serve(a, 0)
			e.serve(b, 1)
			e.serve(a, 2)
			e.serve(b, 3)
			e.serve(a, 4)
			return []*node{a, b}
		}},
		{"two proxies, the other one writing", func(e *resumeEnv) []*node {
			a, b := e.node(nil), e.node(nil)
			e.serve(a, 0, 1)
			a.flush()
			conv, turn := holdClaim(e.t, a.st) // a is writing
			e.serve(b, 2)                      // answered while b's write waits
			waitRetried(e.t, b)
			if err := a.st.SuspendTurn(context.Background(), conv, turn); err != nil {
				e.t.Fatal(err)
			}
			e.serve(b, 3, 4)
			b.flush()
			if b.px.Stats().RecordRetries == 0 {
				e.t.Errorf("b's write was never refused busy")
			}
			return []*node{a, b}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			e := &resumeEnv{t: t, up: wiretest.New(t), ws: ws, db: filepath.Join(ws, "harness.db"), ex: playScript(resumeScript)}
			nodes := tc.play(e)
			for _, n := range nodes {
				n.flush()
			}
			last := nodes[len(nodes)-1]
			wantTranscript(t, last.st, e.forks)
			for _, n := range nodes {
				if s := n.px.Stats(); s.RecordErrors != 0 {
					t.Errorf("%d record errors:\n%s", s.RecordErrors, n.log.String())
				}
			}
		})
	}
}

// holdClaim makes st the writer of the conversation's last turn, as a
// proxy is while it writes a round: a crash now leaves its lease behind.
// It returns the conversation and the turn.
func holdClaim(t *testing.T, st store.DB) (*harness.Conversation, *harness.Turn) {
	t.Helper()
	ctx := context.Background()
	list, err := st.List(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("store lists %d conversations (err %v)", len(list), err)
	}
	conv, err := st.Load(ctx, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	turn := conv.Turns[len(conv.Turns)-1]
	var tr store.TurnResumer = st
	if err := tr.ResumeTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	return conv, turn
}

// markInterrupted has another writer take the conversation over from the
// dead holder without resuming its turn (a note is written), which stores
// the turn as interrupted.
func markInterrupted(t *testing.T, db string) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	list, err := st.List(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("store lists %d conversations (err %v)", len(list), err)
	}
	conv := harness.NewConversation(list[0].ID)
	if err := st.AddNote(ctx, conv, &harness.Note{Text: "a note", By: "test"}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Load(ctx, conv.ID)
	if err != nil || got.Turns[len(got.Turns)-1].Outcome != store.Interrupted {
		t.Fatalf("after the takeover: %+v, %v", got, err)
	}
}

// waitRetried waits until n's recorder has been refused busy and is
// waiting to try again. The bound only catches a hang.
func waitRetried(t *testing.T, n *node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := n.px.rec
	if err := waitUntil(ctx, &r.mu, r.cond, func() bool { return r.retries > 0 }); err != nil {
		t.Fatalf("the write was never refused busy: %v", err)
	}
}

// BenchmarkRoundWrite measures what claiming a conversation only while
// writing costs: a 1 KiB round stored by a writer that holds the turn
// (held), and by one that resumes the turn before and suspends it after,
// as the proxy does for each batch of writes (resumed).
func BenchmarkRoundWrite(b *testing.B) {
	for _, resumed := range []bool{false, true} {
		name := map[bool]string{false: "held", true: "resumed"}[resumed]
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "harness.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			conv, turn := harness.NewConversation("c"), &harness.Turn{Index: 1, Input: "x"}
			if err := st.BeginTurn(ctx, conv, turn); err != nil {
				b.Fatal(err)
			}
			payload := strings.Repeat("x", 1024)
			b.ResetTimer()
			for i := range b.N {
				id := fmt.Sprintf("c%d", i)
				r := &harness.Round{Index: i + 1,
					Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: id, Name: "sh", Args: []byte(`{}`)}}},
					Results:   []*harness.ToolResult{{CallID: id, Tool: "sh", Parts: []harness.Part{harness.TextPart(payload)}}}}
				if resumed {
					if err := st.ResumeTurn(ctx, conv, turn); err != nil {
						b.Fatal(err)
					}
				}
				if err := st.AddRound(ctx, conv, turn, r); err != nil {
					b.Fatal(err)
				}
				if resumed {
					if err := st.SuspendTurn(ctx, conv, turn); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
