package guard

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentharness/harness"
)

// rpSession plays an agent's part for dedupe tests: it runs the calls of
// each round through a harness.Engine (RunCalls: read-only calls in
// parallel, any other alone) guarded by one guard, and appends the round,
// as the agent does.
type rpSession struct {
	t     *testing.T
	g     harness.Guard
	conv  *harness.Conversation
	turn  *harness.Turn
	files map[string]string // what the read tool reads
	n     int
}

func rpNewSession(t *testing.T, p *ResultPolicy, id string) *rpSession {
	conv := harness.NewConversation(id)
	turn := &harness.Turn{Index: 1}
	conv.Turns = append(conv.Turns, turn)
	return &rpSession{t: t, g: p.Guard(), conv: conv, turn: turn, files: map[string]string{"a.go": "package a\n", "b.go": "package b\n"}}
}

func (s *rpSession) newTurn() {
	s.turn = &harness.Turn{Index: len(s.conv.Turns) + 1}
	s.conv.Turns = append(s.conv.Turns, s.turn)
}

type rpCallSpec struct {
	tool string
	args string
}

func rpRead(args string) rpCallSpec  { return rpCallSpec{"read", args} }
func rpFetch(args string) rpCallSpec { return rpCallSpec{"fetch", args} }
func rpWrite(args string) rpCallSpec { return rpCallSpec{"write", args} }

// engine is an engine with the session's tools behind its guard. Built
// per round: the files map is the session's.
func (s *rpSession) engine() *harness.Engine {
	var mu sync.Mutex
	tool := func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
		var a struct{ Path, Text string }
		_ = jsonUnmarshal(call.Args, &a)
		mu.Lock()
		defer mu.Unlock()
		if call.Name == "write" {
			s.files[a.Path] = a.Text
			return harness.TextResult("ok"), nil
		}
		return harness.TextResult(s.files[a.Path]), nil
	}
	var tools []harness.Tool
	for name, risk := range map[string]harness.Risk{"read": harness.ReadOnly, "fetch": harness.ReadOnly | harness.Network, "write": harness.Destructive} {
		tools = append(tools, harness.Tool{Spec: harness.ToolSpec{Name: name, Risk: risk}, Func: tool})
	}
	eng, err := harness.NewEngine(&harness.Options{Tools: tools, Guards: []harness.Guard{s.g}})
	if err != nil {
		s.t.Fatal(err)
	}
	return eng
}

// round runs calls as one round of the agent and appends it.
func (s *rpSession) round(calls ...rpCallSpec) []*harness.ToolResult {
	round := &harness.Round{Index: len(s.turn.Rounds) + 1, Assistant: harness.Message{Role: harness.RoleAssistant}}
	for _, c := range calls {
		s.n++
		round.Assistant.ToolCalls = append(round.Assistant.ToolCalls, harness.ToolCall{ID: fmt.Sprintf("call_%d", s.n), Name: c.tool, Args: []byte(c.args)})
	}
	round.Results = s.engine().RunCalls(context.Background(), s.conv, s.turn, round, nil)
	s.turn.Rounds = append(s.turn.Rounds, round)
	return round.Results
}

func rpDeduped(res *harness.ToolResult) string {
	for _, c := range res.Cuts {
		if c.Kind == harness.CutDeduped {
			return c.Of
		}
	}
	return ""
}

func TestDedupeOffByDefault(t *testing.T) {
	s := rpNewSession(t, nil, "c")
	s.round(rpRead(`{"path":"a.go"}`))
	if r := s.round(rpRead(`{"path":"a.go"}`)); rpDeduped(r[0]) != "" || r[0].Model != nil {
		t.Fatal("a repeat was suppressed with dedupe off")
	}
}

func TestDedupeSeedBehaviour(t *testing.T) {
	from2 := &ResultPolicy{Dedupe: Dedupe{From: 2}}
	t.Run("repeat of a read-only call is suppressed and says what it repeats", func(t *testing.T) {
		s := rpNewSession(t, from2, "c")
		s.round(rpRead(`{"path":"a.go"}`))
		r := s.round(rpRead(`{"path": "a.go"}`))[0]
		if rpDeduped(r) != "call_1" {
			t.Fatalf("cuts %+v", r.Cuts)
		}
		text := rpModelText(r)
		for _, w := range []string{"repeats call call_1", "turn 1, round 1", "nothing has been modified since"} {
			if !strings.Contains(text, w) {
				t.Errorf("marker lacks %q: %s", w, text)
			}
		}
		if r.FullText() != "package a\n" {
			t.Fatal("the stored payload of a deduped call changed")
		}
	})
	t.Run("key ignores key order and whitespace", func(t *testing.T) {
		s := rpNewSession(t, from2, "c")
		s.round(rpRead(`{"path":"a.go","limit":10}`))
		if r := s.round(rpRead("{ \"limit\" : 10,\n \"path\":\"a.go\" }"))[0]; rpDeduped(r) == "" {
			t.Fatal("not suppressed")
		}
		if r := s.round(rpRead(`{"path":"a.go","limit":10.0}`))[0]; rpDeduped(r) == "" {
			t.Fatal("an equal number spelled differently is not the same call")
		}
		if r := s.round(rpRead(`{"path":"a.go","limit":11}`))[0]; rpDeduped(r) != "" {
			t.Fatal("different arguments suppressed")
		}
	})
	t.Run("a write in between clears the record", func(t *testing.T) {
		s := rpNewSession(t, from2, "c")
		s.round(rpRead(`{"path":"a.go"}`))
		s.round(rpWrite(`{"path":"b.go","text":"x"}`))
		if r := s.round(rpRead(`{"path":"a.go"}`))[0]; rpDeduped(r) != "" {
			t.Fatal("suppressed after a write")
		}
	})
	t.Run("network tools are never suppressed", func(t *testing.T) {
		s := rpNewSession(t, from2, "c")
		s.round(rpFetch(`{"path":"a.go"}`))
		if r := s.round(rpFetch(`{"path":"a.go"}`))[0]; rpDeduped(r) != "" {
			t.Fatal("network call suppressed")
		}
	})
	t.Run("a changed result is shown", func(t *testing.T) {
		s := rpNewSession(t, from2, "c")
		s.round(rpRead(`{"path":"a.go"}`))
		s.files["a.go"] = "package a // edited by the user between turns\n"
		s.newTurn()
		if r := s.round(rpRead(`{"path":"a.go"}`))[0]; rpDeduped(r) != "" {
			t.Fatal("a different result was suppressed")
		}
	})
	t.Run("From 3 lets one repeat through", func(t *testing.T) {
		s := rpNewSession(t, &ResultPolicy{Dedupe: Dedupe{From: 3}}, "c")
		s.round(rpRead(`{"path":"a.go"}`))
		if r := s.round(rpRead(`{"path":"a.go"}`))[0]; rpDeduped(r) != "" {
			t.Fatal("second call suppressed with From 3")
		}
		if r := s.round(rpRead(`{"path":"a.go"}`))[0]; rpDeduped(r) != "call_2" {
			t.Fatalf("third call: cuts %+v, want a pointer to the newest full copy (call_2)", r.Cuts)
		}
	})
	t.Run("an earlier result no longer visible is not suppressed", func(t *testing.T) {
		for name, hide := range map[string]func(s *rpSession){
			"cleared": func(s *rpSession) {
				r := s.turn.Rounds[0].Results[0]
				r.Cuts = append(r.Cuts, harness.Cut{Kind: harness.CutCleared})
			},
			"trimmed": func(s *rpSession) {
				r := s.turn.Rounds[0].Results[0]
				r.Cuts = append(r.Cuts, harness.Cut{Kind: harness.CutTrimmed})
			},
			"summarised": func(s *rpSession) {
				s.conv.Notes = append(s.conv.Notes, &harness.Note{After: 1, Text: "summary"})
				s.newTurn()
			},
			"clearing mark": func(s *rpSession) {
				s.conv.Notes = append(s.conv.Notes, &harness.Note{ClearTurn: 1, ClearRound: 1})
			},
		} {
			t.Run(name, func(t *testing.T) {
				s := rpNewSession(t, from2, "c")
				s.round(rpRead(`{"path":"a.go"}`))
				hide(s)
				if r := s.round(rpRead(`{"path":"a.go"}`))[0]; rpDeduped(r) != "" {
					t.Fatal("suppressed although the earlier result is hidden")
				}
				// The repeat shown in full is the new reference.
				if r := s.round(rpRead(`{"path":"a.go"}`))[0]; rpDeduped(r) != "call_2" {
					t.Fatalf("cuts %+v", r.Cuts)
				}
			})
		}
	})
	t.Run("state is per conversation", func(t *testing.T) {
		p := &ResultPolicy{Dedupe: Dedupe{From: 2}}
		g := p.Guard()
		a, b := rpNewSession(t, p, "conv_a"), rpNewSession(t, p, "conv_b")
		a.g, b.g = g, g
		a.round(rpRead(`{"path":"a.go"}`))
		if r := b.round(rpRead(`{"path":"a.go"}`))[0]; rpDeduped(r) != "" {
			t.Fatal("suppressed across conversations")
		}
		b.round(rpWrite(`{"path":"c.go","text":"x"}`)) // clears b only
		if r := a.round(rpRead(`{"path":"a.go"}`))[0]; rpDeduped(r) != "call_1" {
			t.Fatalf("a write in another conversation cleared this one: %+v", r.Cuts)
		}
	})
	t.Run("identical calls in one round", func(t *testing.T) {
		s := rpNewSession(t, from2, "c")
		var calls []rpCallSpec
		for range 16 {
			calls = append(calls, rpRead(`{"path":"a.go"}`))
		}
		rs := s.round(calls...)
		deduped := 0
		for _, r := range rs {
			if of := rpDeduped(r); of != "" {
				deduped++
				if !strings.Contains(rpModelText(r), "earlier in this round") {
					t.Fatalf("marker: %s", rpModelText(r))
				}
			}
		}
		if deduped != 15 {
			t.Fatalf("%d of 16 identical parallel calls suppressed, want 15", deduped)
		}
	})
	t.Run("exempt tools are not suppressed but their writes still clear", func(t *testing.T) {
		s := rpNewSession(t, &ResultPolicy{Dedupe: Dedupe{From: 2}, Tools: map[string]ToolLimit{"read": {Exempt: true}}}, "c")
		s.round(rpRead(`{"path":"a.go"}`))
		if r := s.round(rpRead(`{"path":"a.go"}`))[0]; rpDeduped(r) != "" {
			t.Fatal("exempt tool suppressed")
		}
		s = rpNewSession(t, &ResultPolicy{Dedupe: Dedupe{From: 2}, Tools: map[string]ToolLimit{"write": {Exempt: true}}}, "c")
		s.round(rpRead(`{"path":"a.go"}`))
		s.round(rpWrite(`{"path":"z.go","text":"x"}`))
		if r := s.round(rpRead(`{"path":"a.go"}`))[0]; rpDeduped(r) != "" {
			t.Fatal("an exempt write did not clear the record")
		}
	})
}

func TestDedupeSuppressesASpilledStream(t *testing.T) {
	ws := t.TempDir()
	g := (&ResultPolicy{Dedupe: Dedupe{From: 2}}).Guard()
	log := rpLog(100 << 10)
	conv := harness.NewConversation("c")
	turn := &harness.Turn{Index: 1}
	conv.Turns = append(conv.Turns, turn)
	var first *harness.ToolResult
	for round := 1; round <= 2; round++ {
		ctx := harness.WithCallInfo(context.Background(), harness.CallInfo{Conversation: "c", Turn: 1, Round: round, Workspace: ws, Transcript: conv,
			Spec: harness.ToolSpec{Name: "shell_ro", Risk: harness.ReadOnly}})
		in, _ := rpStreamResult(log)
		id := fmt.Sprintf("call_%d", round)
		res := rpCallWith(t, g, ctx, "shell_ro", id, `{"cmd":"make"}`, in)
		res.CallID = id
		turn.Rounds = append(turn.Rounds, &harness.Round{Index: round, Results: []*harness.ToolResult{res},
			Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: id, Name: "shell_ro", Args: []byte(`{"cmd":"make"}`)}}}})
		if round == 1 {
			first = res
			continue
		}
		if rpDeduped(res) != "call_1" {
			t.Fatalf("cuts %+v", res.Cuts)
		}
		if !strings.Contains(rpModelText(res), first.Cuts[0].Locator) {
			t.Fatalf("the pointer does not name the earlier spill: %s", rpModelText(res))
		}
	}
}

func TestCanonicalArgs(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{`{"a":1,"b":[1,2]}`, `{"b":[1, 2], "a":1}`, true},
		{``, `{}`, true},
		{`{"a":"<x>"}`, `{"a":"\u003cx\u003e"}`, true},
		{`{"a":1}`, `{"a":1.0}`, true}, // one number, as for any JSON reader
		{`{"a":1}`, `{"a":2}`, false},
		{`{"a":{"y":1,"x":2}}`, `{"a":{"x":2,"y":1}}`, true},
	} {
		ca, oka := canonicalArgs([]byte(tc.a))
		cb, okb := canonicalArgs([]byte(tc.b))
		if !oka || !okb || (ca == cb) != tc.same {
			t.Errorf("%s vs %s: %q %q", tc.a, tc.b, ca, cb)
		}
	}
	for _, bad := range []string{`{`, `{"a":1} {"b":2}`, `nope`} {
		if _, ok := canonicalArgs([]byte(bad)); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzCanonicalArgs(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"b":[1,{"c":null}],"a":"x"}`, ``, `[]`, `{"a":1e400}`, "{\"\\ud800\":1}", `{"a":"\xff"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := canonicalArgs([]byte(s))
		if !ok {
			return
		}
		// Canonical form is a fixed point.
		c2, ok2 := canonicalArgs([]byte(c))
		if !ok2 || c2 != c {
			t.Fatalf("canonical(%q) = %q, again %q", s, c, c2)
		}
	})
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// TestDedupeFromTheTranscript pins that repeat suppression decides from
// what the transcript holds (and, within a round, from the round's earlier
// results), not from state of the guard's own.
func TestDedupeFromTheTranscript(t *testing.T) {
	from2 := &ResultPolicy{Dedupe: Dedupe{From: 2}}
	t.Run("a fresh guard on a reloaded transcript still points at the earlier call", func(t *testing.T) {
		s := rpNewSession(t, from2, "c")
		s.round(rpRead(`{"path":"a.go"}`))
		b, err := json.Marshal(s.conv)
		if err != nil {
			t.Fatal(err)
		}
		var conv harness.Conversation
		if err := json.Unmarshal(b, &conv); err != nil {
			t.Fatal(err)
		}
		s.conv, s.turn, s.g = &conv, conv.Turns[0], from2.Guard()
		if r := s.round(rpRead(`{"path":"a.go"}`))[0]; rpDeduped(r) != "call_1" {
			t.Fatalf("cuts %+v", r.Cuts)
		}
	})
	t.Run("every admitted result says what it was", func(t *testing.T) {
		s := rpNewSession(t, from2, "c")
		rs := s.round(rpRead(`{"path":"a.go"}`), rpFetch(`{"path":"a.go"}`), rpWrite(`{"path":"a.go","text":"x"}`))
		want := []string{"sha256:", dedupeRead, dedupeWrite}
		for i, r := range rs {
			if got, _ := r.Meta[metaDedupe].(string); !strings.HasPrefix(got, want[i]) {
				t.Errorf("result %d: %s = %q, want %q…", i, metaDedupe, got, want[i])
			}
		}
	})
	t.Run("a result the guard did not stamp counts as a modification", func(t *testing.T) {
		s := rpNewSession(t, from2, "c")
		s.round(rpRead(`{"path":"a.go"}`))
		// A round admitted by a guard without dedupe (or a call that failed
		// before the guard saw its result) leaves no stamp.
		s.turn.Rounds = append(s.turn.Rounds, &harness.Round{Index: 2,
			Assistant: harness.Message{ToolCalls: []harness.ToolCall{{ID: "other", Name: "read", Args: []byte(`{"path":"b.go"}`)}}},
			Results:   []*harness.ToolResult{{CallID: "other", Tool: "read", Parts: []harness.Part{harness.TextPart("package b\n")}}}})
		if r := s.round(rpRead(`{"path":"a.go"}`))[0]; rpDeduped(r) != "" {
			t.Fatal("suppressed across a result of unknown effect")
		}
	})
	for _, c := range []struct {
		name  string
		calls []rpCallSpec
		want  []string // per call, the call it points at ("" shown in full)
	}{
		{"a repeat in one round points at the first", []rpCallSpec{rpRead(`{"path":"a.go"}`), rpRead(`{"path":"b.go"}`), rpRead(`{"path":"a.go"}`)},
			[]string{"", "", "call_1"}},
		{"a write between them in one round", []rpCallSpec{rpRead(`{"path":"a.go"}`), rpWrite(`{"path":"z.go","text":"x"}`), rpRead(`{"path":"a.go"}`)},
			[]string{"", "", ""}},
		// The unknown tool is refused before any guard sees it: the repeat
		// waits for it (no hang) and treats its unstamped result as a
		// possible modification.
		{"an unknown tool between them in one round", []rpCallSpec{rpRead(`{"path":"a.go"}`), {"nosuch", `{}`}, rpRead(`{"path":"a.go"}`)},
			[]string{"", "", ""}},
		{"three in one round point at the first", []rpCallSpec{rpRead(`{"path":"a.go"}`), rpRead(`{"path":"a.go"}`), rpRead(`{"path":"a.go"}`)},
			[]string{"", "call_1", "call_1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := rpNewSession(t, from2, "c")
			for i, r := range s.round(c.calls...) {
				if got := rpDeduped(r); got != c.want[i] {
					t.Errorf("call %d points at %q, want %q (%s)", i+1, got, c.want[i], rpModelText(r))
				}
			}
		})
	}
	t.Run("a repeat waits for the earlier call running beside it", func(t *testing.T) {
		// The first call's tool returns only after the second's has:
		// the second must still point at the first (call order decides,
		// not which finished first).
		secondDone := make(chan struct{})
		tool := func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			if call.ID == "call_1" {
				select {
				case <-secondDone:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			} else {
				close(secondDone)
			}
			return harness.TextResult("package a\n"), nil
		}
		eng, err := harness.NewEngine(&harness.Options{
			Tools:  []harness.Tool{{Spec: harness.ToolSpec{Name: "read", Risk: harness.ReadOnly}, Func: tool}},
			Guards: []harness.Guard{from2.Guard()},
		})
		if err != nil {
			t.Fatal(err)
		}
		conv := harness.NewConversation("c")
		turn := &harness.Turn{Index: 1}
		conv.Turns = append(conv.Turns, turn)
		round := &harness.Round{Index: 1, Assistant: harness.Message{ToolCalls: []harness.ToolCall{
			{ID: "call_1", Name: "read", Args: []byte(`{"path":"a.go"}`)}, {ID: "call_2", Name: "read", Args: []byte(`{"path":"a.go"}`)}}}}
		rs := eng.RunCalls(context.Background(), conv, turn, round, nil)
		if rpDeduped(rs[0]) != "" || rpDeduped(rs[1]) != "call_1" {
			t.Fatalf("cuts %+v / %+v", rs[0].Cuts, rs[1].Cuts)
		}
	})
}
