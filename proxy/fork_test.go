package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wiretest"
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
func storedConvs(t *testing.T, st *sqlite.Store) []string {
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
