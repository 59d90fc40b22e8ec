package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/sqlite"
)

// clientWire is how a scripted client speaks: its request path, the body
// of a history (turns before the last complete, the last one up to its
// first done steps) and the upstream's answer.
type clientWire struct {
	path  string
	body  func(turns []scriptTurn, done int) []byte
	reply func(text string, calls []wiretest.Call) wiretest.Reply
}

var anthropicClient = clientWire{path: "/v1/messages", body: anthropicHistory,
	reply: func(text string, calls []wiretest.Call) wiretest.Reply {
		return wiretest.AnthropicStream("m", text, calls, wiretest.Usage{Input: 100, Output: 10})
	}}

// geminiClient speaks as Gemini CLI 0.61.0 does: its session context
// (dated, so two sessions of one day share a key) beside the first
// prompt. With apiIDs the upstream gives its calls ids; without, the
// calls carry none and the client names each response itself.
func geminiClient(apiIDs bool) clientWire {
	const sessionCtx = "<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\n" +
		"Today's date is Wednesday, December 2, 2026 (formatted according to the user's locale).\nMy operating system is: linux\n" +
		"- **Workspace Directories:**\n  - /w\n- **Directory Structure:**\n\n/w/\n└───a.go\n</session_context>"
	callID := func(s step) string {
		if apiIDs {
			return s.id
		}
		return ""
	}
	body := func(turns []scriptTurn, done int) []byte {
		var cs []string
		for ti, tn := range turns {
			parts := `{"text":` + mustJSON(tn.prompt) + `}`
			if ti == 0 {
				parts = `{"text":` + mustJSON(sessionCtx) + `},` + parts
			}
			cs = append(cs, `{"role":"user","parts":[`+parts+`]}`)
			steps := tn.steps
			if ti == len(turns)-1 {
				steps = steps[:done]
			}
			for _, s := range steps {
				fc := map[string]any{"name": s.tool, "args": json.RawMessage(s.args)}
				if id := callID(s); id != "" {
					fc["id"] = id
				}
				cs = append(cs, `{"role":"model","parts":[{"functionCall":`+mustJSON(fc)+`}]}`,
					`{"role":"user","parts":[{"functionResponse":{"id":`+mustJSON(s.id)+`,"name":`+mustJSON(s.tool)+`,"response":{"output":`+mustJSON(s.result)+`}}}]}`)
			}
			if ti < len(turns)-1 {
				cs = append(cs, `{"role":"model","parts":[{"text":`+mustJSON(tn.answer)+`}]}`)
			}
		}
		return []byte(`{"contents":[` + strings.Join(cs, ",") + `],"systemInstruction":{"parts":[{"text":"You are Gemini CLI."}]},` +
			`"tools":[{"functionDeclarations":[{"name":"run_shell_command","parameters":{"type":"object"}}]}]}`)
	}
	return clientWire{path: "/v1beta/models/gemini-test:streamGenerateContent", body: body,
		reply: func(text string, calls []wiretest.Call) wiretest.Reply {
			if !apiIDs {
				for i := range calls {
					calls[i].ID = ""
				}
			}
			return wiretest.GeminiStream("gemini-test", text, calls, wiretest.Usage{Input: 100, Output: 10})
		}}
}

// codexClient speaks as Codex does over the Responses API: its session
// id as prompt_cache_key (the same for every request, whatever the
// history), each turn's prompt and an answer message.
var codexClient = clientWire{path: "/v1/responses",
	body: func(turns []scriptTurn, done int) []byte {
		var items []string
		for ti, tn := range turns {
			items = append(items, codexMsg("user", tn.prompt))
			steps := tn.steps
			if ti == len(turns)-1 {
				steps = steps[:done]
			}
			for _, s := range steps {
				items = append(items, codexCall(s.id, s.args), codexOutput(s.id, s.result))
			}
			if ti < len(turns)-1 {
				items = append(items, codexMsg("assistant", tn.answer))
			}
		}
		return codexBody(items...)
	},
	reply: func(text string, calls []wiretest.Call) wiretest.Reply {
		for i := range calls {
			calls[i].Name, calls[i].Args = "exec_command", `{"cmd":`+mustJSON(calls[i].Args)+`}`
		}
		return wiretest.ResponsesStream("gpt-test", text, calls, wiretest.Usage{Input: 100, Output: 10})
	}}

// exchanges lists the requests of a client playing turns in order (per
// turn, one request per step and one for the answer) with the answers.
func (w clientWire) exchanges(turns []scriptTurn) []exchange {
	var out []exchange
	for ti, tn := range turns {
		for done := 0; done <= len(tn.steps); done++ {
			var reply wiretest.Reply
			if done < len(tn.steps) {
				s := tn.steps[done]
				reply = w.reply("", []wiretest.Call{{ID: s.id, Name: s.tool, Args: s.args}})
			} else {
				reply = w.reply(tn.answer, nil)
			}
			out = append(out, exchange{body: w.body(turns[:ti+1], done), reply: reply})
		}
	}
	return out
}

// bash is a step of the scripted runs: a shell call and its output.
func bash(id, out string) step {
	return step{id: id, tool: "Bash", args: `{"command":"echo ` + id + `"}`, result: out}
}

// turnsOf writes a stored conversation as "input [result call ids] =answer"
// per turn, " / " between turns.
func turnsOf(conv *harness.Conversation) string {
	var ts []string
	for _, t := range conv.Turns {
		var ids []string
		for _, r := range t.Rounds {
			for _, res := range r.Results {
				ids = append(ids, res.CallID)
			}
		}
		s := t.Input + " [" + strings.Join(ids, " ") + "]"
		if t.Outcome == harness.Answered {
			s += " =" + t.Answer()
		}
		ts = append(ts, s)
	}
	return strings.Join(ts, " / ")
}

// storedConvs lists turnsOf of every stored conversation, sorted.
func storedConvs(t *testing.T, st store.Store) []string {
	t.Helper()
	ctx := context.Background()
	list, err := st.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range list {
		conv, err := st.Load(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, turnsOf(conv))
	}
	slices.Sort(out)
	return out
}

// play is a stretch of one run's exchanges, [from, to) (to 0: to the end).
type play struct{ run, from, to int }

// forkRuns are the scripted runs of TestFork.
var (
	runA = []scriptTurn{{prompt: "fix it", answer: "A done", steps: []step{bash("a1", "one\n"), bash("a2", "two\n")}}}
	runB = []scriptTurn{{prompt: "fix it", answer: "B done", steps: []step{bash("b1", "uno\n")}}}
	// fourTurns and its rewind to turn 2 with other words.
	fourTurns = []scriptTurn{
		{prompt: "t1", answer: "r1", steps: []step{bash("c1", "x\n")}},
		{prompt: "t2", answer: "r2", steps: []step{bash("c2", "x\n")}},
		{prompt: "t3", answer: "r3", steps: []step{bash("c3", "x\n")}},
		{prompt: "t4", answer: "r4", steps: []step{bash("c4", "x\n")}},
	}
	rewound = []scriptTurn{fourTurns[0],
		{prompt: "t2, but another way", answer: "r2'", steps: []step{bash("d2", "y\n")}},
		{prompt: "t3'", answer: "r3'", steps: []step{bash("d3", "y\n")}},
	}
	// pruned is fourTurns' first two turns as opencode sends them later:
	// the old outputs replaced, then a third turn.
	pruned = []scriptTurn{
		{prompt: "t1", answer: "r1", steps: []step{{id: "c1", tool: "Bash", args: `{"command":"echo c1"}`, result: "[Old tool result content cleared]"}}},
		fourTurns[1], fourTurns[2],
	}
	// branchOfB diverges from runA at a1's next round, then twice from
	// each other.
	branch1 = []scriptTurn{{prompt: "go", answer: "1", steps: []step{bash("a1", "x\n"), bash("a2", "x\n")}}}
	branch2 = []scriptTurn{{prompt: "go", answer: "2", steps: []step{bash("a1", "x\n"), bash("b2", "x\n"), bash("b3", "x\n")}}}
	branch3 = []scriptTurn{{prompt: "go", answer: "3", steps: []step{bash("a1", "x\n"), bash("b2", "x\n"), bash("c3", "x\n")}}}
	// gemini sessions: one tool each time, other commands and outputs.
	gemA = []scriptTurn{{prompt: "list the files", answer: "a.go", steps: []step{
		{id: "run_shell_command-1764662400000-1", tool: "run_shell_command", args: `{"command":"ls"}`, result: "a.go\n"}}}}
	gemB = []scriptTurn{{prompt: "list the files", answer: "just a.go", steps: []step{
		{id: "run_shell_command-1764666000000-1", tool: "run_shell_command", args: `{"command":"ls -la"}`, result: "total 4\na.go\n"}}}}
)

// TestFork: runs whose histories share a conversation key but diverge
// are stored as conversations of their own, each with its own rounds; a
// history that only repeats or extends the stored one, or rewrites old
// results, is not a fork.
func TestFork(t *testing.T) {
	all := func(run int) play { return play{run: run} }
	cases := []struct {
		name  string
		wire  clientWire
		runs  [][]scriptTurn
		plays []play
		want  []string
		forks int64
	}{
		{"same key, two runs with other calls", anthropicClient, [][]scriptTurn{runA, runB}, []play{all(0), all(1)},
			[]string{"fix it [a1 a2] =A done", "fix it [b1] =B done"}, 1},
		{"same key, two runs interleaved", anthropicClient, [][]scriptTurn{runA, runB},
			[]play{{0, 0, 1}, {1, 0, 1}, {0, 1, 2}, {1, 1, 2}, {0, 2, 3}},
			[]string{"fix it [a1 a2] =A done", "fix it [b1] =B done"}, 1},
		{"rewind to turn 2 of 4 with other words", anthropicClient, [][]scriptTurn{fourTurns, rewound}, []play{all(0), {1, 2, 0}},
			[]string{"t1 [c1] =r1 / t2 [c2] =r2 / t3 [c3] =r3 / t4 [c4] =r4", "t1 [c1] =r1 / t2, but another way [d2] =r2' / t3' [d3] =r3'"}, 1},
		{"a retry of older requests", anthropicClient, [][]scriptTurn{fourTurns}, []play{all(0), {0, 1, 2}, {0, 4, 6}},
			[]string{"t1 [c1] =r1 / t2 [c2] =r2 / t3 [c3] =r3 / t4 [c4] =r4"}, 0},
		{"old results pruned by the client", anthropicClient, [][]scriptTurn{fourTurns[:2], pruned}, []play{all(0), {1, 4, 0}},
			[]string{"t1 [c1] =r1 / t2 [c2] =r2 / t3 [c3] =r3"}, 0},
		{"a branch diverging again forks again", anthropicClient, [][]scriptTurn{branch1, branch2, branch3},
			[]play{all(0), {1, 1, 0}, {2, 2, 0}},
			[]string{"go [a1 a2] =1", "go [a1 b2 b3] =2", "go [a1 b2 c3] =3"}, 2},
		{"codex: backtrack to turn 2 of 4 under one prompt_cache_key", codexClient, [][]scriptTurn{fourTurns, rewound}, []play{all(0), {1, 2, 0}},
			[]string{"t1 [c1] =r1 / t2 [c2] =r2 / t3 [c3] =r3 / t4 [c4] =r4", "t1 [c1] =r1 / t2, but another way [d2] =r2' / t3' [d3] =r3'"}, 1},
		{"codex: a retry of older requests", codexClient, [][]scriptTurn{fourTurns}, []play{all(0), {0, 3, 4}},
			[]string{"t1 [c1] =r1 / t2 [c2] =r2 / t3 [c3] =r3 / t4 [c4] =r4"}, 0},
		{"gemini cli: two sessions the same day, calls without ids", geminiClient(false), [][]scriptTurn{gemA, gemB}, []play{all(0), all(1)},
			[]string{"list the files [run_shell_command-1764662400000-1] =a.go", "list the files [run_shell_command-1764666000000-1] =just a.go"}, 1},
		{"gemini cli: two sessions the same day, the api's ids", geminiClient(true), [][]scriptTurn{gemA, gemB}, []play{all(0), all(1)},
			[]string{"list the files [run_shell_command-1764662400000-1] =a.go", "list the files [run_shell_command-1764666000000-1] =just a.go"}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil)
			for _, pl := range tc.plays {
				ex := tc.wire.exchanges(tc.runs[pl.run])
				to := pl.to
				if to == 0 {
					to = len(ex)
				}
				for i := pl.from; i < to; i++ {
					r.up.Enqueue(ex[i].reply)
					if code, _, resp := r.post(tc.wire.path, ex[i].body, nil); code != 200 {
						t.Fatalf("run %d exchange %d: status %d: %s", pl.run, i, code, resp)
					}
				}
			}
			if err := r.px.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := storedConvs(t, r.st); !slices.Equal(got, tc.want) {
				t.Errorf("stored:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
			st := r.px.Stats()
			if st.Forks != tc.forks || st.RecordErrors != 0 || st.CacheBreaks != 0 {
				t.Errorf("%d forks, %d record errors, %d cache breaks; want %d, 0, 0", st.Forks, st.RecordErrors, st.CacheBreaks, tc.forks)
			}
			log := r.log.String()
			if n := strings.Count(log, " forks from "); int64(n) != tc.forks {
				t.Errorf("%d fork notices, want %d:\n%s", n, tc.forks, log)
			}
			if strings.Contains(log, "warning") {
				t.Errorf("a warning:\n%s", log)
			}
			for _, s := range tc.want {
				if strings.Contains(log, s) {
					t.Errorf("the log holds content (%q)", s)
				}
			}
		})
	}
}

// TestForkNotice: the notice names both conversations and where the
// history diverged, with no content.
func TestForkNotice(t *testing.T) {
	r := newRig(t, nil)
	for _, run := range [][]scriptTurn{fourTurns, rewound} {
		ex := anthropicClient.exchanges(run)
		for _, e := range ex {
			r.up.Enqueue(e.reply)
			r.post(anthropicClient.path, e.body, nil)
		}
	}
	if err := r.px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	list, err := r.st.List(context.Background())
	if err != nil || len(list) != 2 {
		t.Fatalf("%d conversations (err %v)", len(list), err)
	}
	parent, fork := list[0].ID, list[1].ID
	if strings.HasPrefix(parent, fork) {
		parent, fork = fork, parent
	}
	want := fmt.Sprintf("harness proxy: conversation %s forks from %s at turn 2 input (1 shared turn(s))", fork, parent)
	if !strings.Contains(r.log.String(), want) {
		t.Errorf("no notice %q in:\n%s", want, r.log.String())
	}
}

// TestForkSharedPrefix: a fork sends its shared prefix with the bytes the
// parent sent it with (the lock file's cut copy, decided once), counts
// its turn budget from its own results only, and stores the prefix's
// results whole.
func TestForkSharedPrefix(t *testing.T) {
	lock := lockFile(300 << 10)
	body := func(tag string) string { return strings.Repeat(tag+" 0123456789abcdef\n", 10_000/20) } // 10,000 chars
	parent := []scriptTurn{
		{prompt: "read the lock file", answer: "read", steps: []step{{id: "lock", tool: "Bash", args: `{"command":"cat package-lock.json"}`, result: lock}}},
		{prompt: "three bodies", answer: "done", steps: []step{bash("p1", body("p1")), bash("p2", body("p2")), bash("p3", body("p3"))}},
	}
	fork := []scriptTurn{parent[0],
		{prompt: "three bodies", answer: "done'", steps: []step{bash("p1", body("p1")), bash("q2", body("q2")), bash("q3", body("q3"))}}}
	r := newRig(t, nil)
	ex := anthropicClient.exchanges(parent)
	fx := anthropicClient.exchanges(fork)
	// The parent's whole run, then the fork from its third round on.
	for _, e := range append(ex, fx[4:]...) {
		r.up.Enqueue(e.reply)
		if code, _, resp := r.post(anthropicClient.path, e.body, nil); code != 200 {
			t.Fatalf("status %d: %s", code, resp)
		}
	}
	if err := r.px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	lockCopy, shown := sentResults(t, r.up.Requests(), "p1", "p2", "p3", "q2", "q3")
	if len(lockCopy) >= len(lock) {
		t.Fatalf("the lock file went whole (%d bytes)", len(lockCopy))
	}
	// Each branch's turn 2 shares the turn's budget among its own
	// results: the second body passes whole in both, the third is cut to
	// what is left.
	for _, id := range []string{"p2", "q2"} {
		if shown[id] != 10_000 {
			t.Errorf("%s shown %d chars, want 10,000 (whole)", id, shown[id])
		}
	}
	for _, id := range []string{"p3", "q3"} {
		if shown[id] >= 10_000 || shown[id] == 0 {
			t.Errorf("%s shown %d chars, want it cut by the turn budget", id, shown[id])
		}
	}
	if shown["p3"] != shown["q3"] {
		t.Errorf("the third bodies were cut to %d and %d chars, want the same budget left", shown["p3"], shown["q3"])
	}
	st := r.px.Stats()
	if st.Forks != 1 || st.CacheBreaks != 0 || st.RecordErrors != 0 {
		t.Errorf("%d forks, %d cache breaks, %d record errors; want 1, 0, 0", st.Forks, st.CacheBreaks, st.RecordErrors)
	}
	list, err := r.st.List(context.Background())
	if err != nil || len(list) != 2 {
		t.Fatalf("%d conversations (err %v)", len(list), err)
	}
	for _, c := range list {
		full, err := r.st.FullResult(context.Background(), c.ID, "lock")
		if err != nil || full.FullText() != lock {
			t.Errorf("%s: the lock file stored as %d bytes (err %v), want it whole", c.ID, len(full.FullText()), err)
		}
	}
}

// sentResults reads the requests the upstream got: the copy of their
// first result, which must be the same bytes in each that carries one,
// and the length of the text sent for each result of ids, in that order
// the requests' last results.
func sentResults(t *testing.T, reqs []wiretest.Request, ids ...string) (string, map[string]int) {
	t.Helper()
	first := ""
	shown := map[string]int{}
	for i, req := range reqs {
		got := contents(t, anthropicFormat{}, req.Body)
		if len(got) == 0 {
			continue
		}
		if first == "" {
			first = got[0]
		}
		if got[0] != first {
			t.Errorf("request %d sent the first result's copy with other bytes", i+1)
		}
		var carried []string
		for _, id := range ids {
			if strings.Contains(string(req.Body), `"tool_use_id":"`+id+`"`) {
				carried = append(carried, id)
			}
		}
		for k, id := range carried {
			var text string
			if err := json.Unmarshal([]byte(got[len(got)-len(carried)+k]), &text); err != nil {
				t.Fatal(err)
			}
			shown[id] = len(text)
		}
	}
	return first, shown
}

// TestForkIdleOwn: the idle clear measures a fork's pause from the
// fork's own answers. After a pause longer than the cache lives, the
// parent's next request clears its old results; a fork's first request
// after the same pause does not (it has relayed no answer yet).
func TestForkIdleOwn(t *testing.T) {
	var clock atomic.Int64
	start := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	r := newRig(t, &Options{Now: func() time.Time { return start.Add(time.Duration(clock.Load())) }})
	var steps []step
	for i := range 6 {
		id := fmt.Sprintf("a%d", i+1)
		steps = append(steps, bash(id, strings.Repeat(id+" output line\n", 100)))
	}
	parent := []scriptTurn{{prompt: "six files", answer: "done", steps: steps}, {prompt: "and now?", answer: "now"}}
	other := append(slices.Clone(steps[:5]), bash("b6", strings.Repeat("b6 output line\n", 100)))
	fork := []scriptTurn{{prompt: "six files", answer: "done'", steps: other}}
	send := func(e exchange) {
		r.up.Enqueue(e.reply)
		if code, _, resp := r.post(anthropicClient.path, e.body, nil); code != 200 {
			t.Fatalf("status %d: %s", code, resp)
		}
	}
	ex, fx := anthropicClient.exchanges(parent), anthropicClient.exchanges(fork)
	for _, e := range ex[:7] { // the first turn, answered
		send(e)
	}
	clock.Add(int64(2 * time.Hour)) // over Anthropic's 5 minutes
	send(fx[6])
	if err := r.px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := r.px.Stats().IdleClears; n != 0 {
		t.Errorf("the fork's first request cleared (%d clears): its pause is the parent's", n)
	}
	send(ex[7])
	if err := r.px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := r.px.Stats()
	if st.Forks != 1 || st.IdleClears != 1 {
		t.Errorf("%d forks, %d idle clears; want 1, 1 (the parent's)", st.Forks, st.IdleClears)
	}
}

// TestForkAcrossRestart: a proxy restarted on the store finds the fork a
// branch's requests belong to (the same id, derived again), records the
// rest of the branch there, and makes no other conversation.
func TestForkAcrossRestart(t *testing.T) {
	ws := t.TempDir()
	up := wiretest.New(t)
	e := &resumeEnv{t: t, up: up, ws: ws, db: filepath.Join(ws, "harness.db")}
	a := e.node(nil)
	e.ex = anthropicClient.exchanges(fourTurns)
	e.serve(a, 0, 1, 2, 3, 4, 5, 6, 7)
	e.ex = anthropicClient.exchanges(rewound)
	e.serve(a, 2, 3) // the rewind: turn 2 anew, forked
	if !strings.Contains(a.log.String(), " forks from ") {
		t.Fatalf("no fork before the restart:\n%s", a.log.String())
	}
	a.close()
	b := e.node(nil)
	e.serve(b, 4, 5)
	b.flush()
	if strings.Contains(b.log.String(), " forks from ") || strings.Contains(b.log.String(), "warning") {
		t.Errorf("the restarted proxy forked again or warned:\n%s", b.log.String())
	}
	want := []string{"t1 [c1] =r1 / t2 [c2] =r2 / t3 [c3] =r3 / t4 [c4] =r4", "t1 [c1] =r1 / t2, but another way [d2] =r2' / t3' [d3] =r3'"}
	if got := storedConvs(t, b.st); !slices.Equal(got, want) {
		t.Errorf("stored:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if s := b.px.Stats(); s.RecordErrors != 0 || s.Forks != 0 {
		t.Errorf("%d record errors, %d forks after the restart; want 0, 0", s.RecordErrors, s.Forks)
	}
}

// TestForkInheritsClear: a fork made after its parent's idle clear sends
// the shared results as the parent last sent them, placeholders
// included, and so does a proxy restarted on the store.
func TestForkInheritsClear(t *testing.T) {
	var clock atomic.Int64
	now := func() time.Time {
		return time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC).Add(time.Duration(clock.Load()))
	}
	up := wiretest.New(t)
	db := filepath.Join(t.TempDir(), "harness.db")
	ws := t.TempDir()
	start := func() (*Proxy, *httptest.Server, store.DB) {
		st, err := sqlite.Open(context.Background(), db, nil)
		if err != nil {
			t.Fatal(err)
		}
		px, err := New(&Options{Upstream: up.URL, Store: st, Workspace: ws, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return px, httptest.NewServer(px), st
	}
	var steps []step
	for i := range 6 {
		id := fmt.Sprintf("a%d", i+1)
		steps = append(steps, bash(id, strings.Repeat(id+" output line\n", 100)))
	}
	parent := []scriptTurn{{prompt: "six files", answer: "done", steps: steps}, {prompt: "and now?", answer: "now"}}
	fork := []scriptTurn{parent[0], {prompt: "and now, another way?", answer: "now'", steps: []step{bash("b1", "x\n")}}}
	ex, fx := anthropicClient.exchanges(parent), anthropicClient.exchanges(fork)
	px, srv, st := start()
	send := func(srv *httptest.Server, e exchange) []byte {
		up.Enqueue(e.reply)
		resp, err := http.Post(srv.URL+anthropicClient.path, "application/json", bytes.NewReader(e.body))
		if err != nil {
			t.Fatal(err)
		}
		// Read to the end: the proxy records the answer (its time, where
		// a pause starts) before it ends the stream, so the clock must
		// not move before.
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		reqs := up.Requests()
		return reqs[len(reqs)-1].Body
	}
	for _, e := range ex[:7] {
		send(srv, e)
	}
	clock.Add(int64(2 * time.Hour))
	cleared := contents(t, anthropicFormat{}, send(srv, ex[7]))[:2] // the parent's clear: a1 and a2
	forked := contents(t, anthropicFormat{}, send(srv, fx[7]))[:2]
	srv.Close()
	if err := px.Close(); err != nil {
		t.Fatal(err)
	}
	if s := px.Stats(); s.IdleClears != 1 || s.Forks != 1 {
		t.Errorf("%d idle clears, %d forks; want 1, 1", s.IdleClears, s.Forks)
	}
	st.Close()
	px, srv, st = start()
	defer st.Close()
	defer px.Close()
	defer srv.Close()
	restarted := contents(t, anthropicFormat{}, send(srv, fx[8]))[:2]
	for i := range cleared {
		if !strings.Contains(cleared[i], "cleared after an idle pause") {
			t.Fatalf("the parent's a%d went as %.80s, not cleared", i+1, cleared[i])
		}
		if forked[i] != cleared[i] || restarted[i] != cleared[i] {
			t.Errorf("a%d: the fork sent %.80s, after the restart %.80s; want the parent's %.80s", i+1, forked[i], restarted[i], cleared[i])
		}
	}
}

// TestForkSideRequests: a client that asks another model about its
// conversation before each turn, with the history so far and no tools,
// keeps that model's answer out of its history. Those requests are one
// side conversation whose turns are the prompts it answered, and the main
// conversation is whole: no fork and no warning, though each side
// request's history holds, in place of the stored side answer, the main
// conversation's rounds. (Gemini CLI 0.61's router sends the history
// without its function calls, so it never meets this case.)
func TestForkSideRequests(t *testing.T) {
	w := geminiClient(false)
	turns := []scriptTurn{
		{prompt: "list the files", answer: "a.go", steps: []step{{id: "run_shell_command-1-1", tool: "run_shell_command", args: `{"command":"ls"}`, result: "a.go\n"}}},
		{prompt: "show a.go", answer: "package a", steps: []step{{id: "run_shell_command-2-1", tool: "run_shell_command", args: `{"command":"cat a.go"}`, result: "package a\n"}}},
		{prompt: "count its lines", answer: "1", steps: []step{{id: "run_shell_command-3-1", tool: "run_shell_command", args: `{"command":"wc -l a.go"}`, result: "1 a.go\n"}}},
	}
	const tools = `"tools":[{"functionDeclarations":[{"name":"run_shell_command","parameters":{"type":"object"}}]}]`
	choice := wiretest.JSON(`{"candidates":[{"content":{"role":"model","parts":[{"text":"{\"model_choice\":\"flash\"}"}]},"finishReason":"STOP","index":0}],` +
		`"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":15}}`)
	r := newRig(t, nil)
	post := func(path string, body []byte) {
		t.Helper()
		if code, _, resp := r.post(path, body, nil); code != 200 {
			t.Fatalf("%s: status %d: %s", path, code, resp)
		}
	}
	for ti := range turns {
		router := strings.Replace(string(w.body(turns[:ti+1], 0)), tools, `"generationConfig":{"responseMimeType":"application/json"}`, 1)
		if router == string(w.body(turns[:ti+1], 0)) {
			t.Fatal("the router's body still offers tools")
		}
		r.up.Enqueue(choice)
		post("/v1beta/models/gemini-router:generateContent", []byte(strings.Replace(router, "You are Gemini CLI.", "Choose a model.", 1)))
		ex := w.exchanges(turns[:ti+1])
		for _, e := range ex[len(ex)-len(turns[ti].steps)-1:] {
			r.up.Enqueue(e.reply)
			post(w.path, e.body)
		}
	}
	if err := r.px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`list the files [] ={"model_choice":"flash"} / show a.go [] ={"model_choice":"flash"} / count its lines [] ={"model_choice":"flash"}`,
		"list the files [run_shell_command-1-1] =a.go / show a.go [run_shell_command-2-1] =package a / count its lines [run_shell_command-3-1] =1",
	}
	if got := storedConvs(t, r.st); !slices.Equal(got, want) {
		t.Errorf("stored:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if st := r.px.Stats(); st.Forks != 0 || st.RecordErrors != 0 {
		t.Errorf("%d forks, %d record errors; want none", st.Forks, st.RecordErrors)
	}
	if log := r.log.String(); strings.Contains(log, "warning") || strings.Contains(log, " forks from ") {
		t.Errorf("a warning or a fork notice:\n%s", log)
	}
}
