package sqlite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
)

// payload is the deterministic output of a call, sized from a few bytes to
// 30 KB, so that content hashes can be checked after the fact.
func payload(conv string, turn int, call string) string {
	seed := fmt.Sprintf("%s/%d/%s", conv, turn, call)
	sum := sha256.Sum256([]byte(seed))
	n := 10 + int(sum[0])*120
	return seed + ":" + strings.Repeat(hex.EncodeToString(sum[:]), n/64+1)[:n]
}

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// toolModel asks for two fetches in the first round of a turn and answers
// in the second; its answer names the turn so resumed views can be checked.
func toolModel(requests *[]*harness.Request, mu *sync.Mutex) harness.ModelFunc {
	return func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		if mu != nil {
			mu.Lock()
			*requests = append(*requests, req)
			mu.Unlock()
		}
		if req.Round == 1 && !req.Final {
			return &harness.Response{
				Message: harness.Message{ToolCalls: []harness.ToolCall{
					{ID: fmt.Sprintf("t%d_a", req.Turn), Name: "fetch", Args: json.RawMessage(`{"what":"a"}`)},
					{ID: fmt.Sprintf("t%d_b", req.Turn), Name: "fetch", Args: json.RawMessage(`{"what":"b"}`)},
				}},
				Usage: harness.Usage{Input: 100 * req.Turn, Cached: 10, Output: 5},
			}, nil
		}
		return &harness.Response{
			Message: harness.Message{Parts: []harness.Part{harness.TextPart(fmt.Sprintf("answer of turn %d after %d messages", req.Turn, len(req.Messages)))}},
			Usage:   harness.Usage{Input: 200 * req.Turn, Output: 7},
		}, nil
	}
}

func fetchTool() harness.Tool {
	return harness.Tool{
		Spec: harness.ToolSpec{Name: "fetch", Description: "fetch a thing", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			info, _ := harness.CallInfoFrom(ctx)
			return harness.TextResult(payload(info.Conversation, info.Turn, call.ID)), nil
		},
	}
}

func newAgent(t testing.TB, s *Store, model harness.Model, policies ...harness.ViewPolicy) *harness.Agent {
	t.Helper()
	a, err := harness.New(model, &harness.Options{
		System: "sys", Tools: []harness.Tool{fetchTool()}, Recorder: s, Observer: s.Observer(nil), Policies: policies,
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestResume runs a turn, closes the store, reopens it, loads the
// conversation and runs a second turn whose request shows turn 1.
func TestResume(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "harness.db")
	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("")
	if _, err := newAgent(t, s, toolModel(nil, nil)).Run(ctx, conv, "first question"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	loaded, err := s.Load(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		reqs []*harness.Request
	)
	res, err := newAgent(t, s, toolModel(&reqs, &mu)).Run(ctx, loaded, "second question")
	if err != nil {
		t.Fatal(err)
	}
	if res.Turn.Index != 2 || res.Outcome != harness.Answered {
		t.Fatalf("resumed turn %d, outcome %s", res.Turn.Index, res.Outcome)
	}
	first := reqs[0].Messages
	var texts []string
	for _, m := range first {
		texts = append(texts, string(m.Role)+":"+m.Text())
	}
	joined := strings.Join(texts, "\n")
	for _, want := range []string{"user:first question", "tool:" + payload(conv.ID, 1, "t1_a"), "assistant:answer of turn 1", "user:second question"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the resumed request lacks %.60q:\n%.500s", want, joined)
		}
	}
	again, err := s.LoadFull(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Turns) != 2 || again.Turns[1].Answer() != "answer of turn 2 after 10 messages" {
		t.Errorf("stored after resume: %d turns, answer %q", len(again.Turns), again.LastTurn().Answer())
	}
}

// TestEventsAndViewCuts stores a run's events and the turn budget's trims,
// and reports both per call.
func TestEventsAndViewCuts(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t, nil)
	big := strings.Repeat("0123456789", 1500) // 15,000 chars per result
	model := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		if req.Final {
			return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart("done")}}}, nil
		}
		return &harness.Response{Message: harness.Message{ToolCalls: []harness.ToolCall{{ID: fmt.Sprintf("c%d", req.Round), Name: "big", Args: json.RawMessage(`{}`)}}}}, nil
	})
	bigTool := harness.Tool{Spec: harness.ToolSpec{Name: "big", Risk: harness.ReadOnly}, Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
		return harness.TextResult(big), nil
	}}
	a, err := harness.New(model, &harness.Options{Tools: []harness.Tool{bigTool}, MaxRounds: 3, Recorder: s, Observer: s.Observer(nil),
		Policies: []harness.ViewPolicy{&guard.TurnBudget{}}})
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("c_budget")
	if _, err := a.Run(ctx, conv, "go"); err != nil {
		t.Fatal(err)
	}
	if err := s.EventErr(); err != nil {
		t.Fatal(err)
	}
	calls, err := s.Calls(ctx, conv.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 3 {
		t.Fatalf("%d calls", len(calls))
	}
	for _, c := range calls {
		if c.FullChars != 15_000 || c.ModelChars != 15_000 || len(c.Cuts) != 0 || string(c.Args) != "{}" {
			t.Errorf("%s: %+v", c.CallID, c)
		}
		if len(c.Views) != 1 {
			t.Fatalf("%s: %d view cuts, want the final request's", c.CallID, len(c.Views))
		}
		v := c.Views[0]
		if v.Request != 4 || v.Kind != harness.CutTrimmed || v.SizeIn != 15_000 || v.SizeOut != 8000 || v.Unit != "chars" ||
			!strings.Contains(v.Marker, "trimmed to fit") || v.Locator != "call:"+c.CallID {
			t.Errorf("%s: view cut %+v", c.CallID, v)
		}
	}
	events, err := s.Events(ctx, conv.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[harness.EventKind]int{}
	for _, e := range events {
		kinds[e.Kind]++
	}
	if kinds[harness.EventTurnStart] != 1 || kinds[harness.EventRequest] != 4 || kinds[harness.EventToolResult] != 3 ||
		kinds[harness.EventPolicy] != 4 || kinds[harness.EventTurnEnd] != 1 {
		t.Errorf("stored events: %v", kinds)
	}
}

// TestConcurrentRuns runs 50 conversations × 20 turns at once through the
// real agent and checks that nothing is lost: row counts, and every
// result's content hash, answer and usage.
func TestConcurrentRuns(t *testing.T) {
	const convs, turns = 50, 20
	ctx := context.Background()
	s := openTemp(t, nil)
	a := newAgent(t, s, toolModel(nil, nil))
	ids := make([]string, convs)
	errs := make(chan error, convs)
	var wg sync.WaitGroup
	for g := range convs {
		ids[g] = fmt.Sprintf("c_conc_%02d", g)
		wg.Go(func() {
			conv := harness.NewConversation(ids[g])
			for i := range turns {
				if _, err := a.Run(ctx, conv, fmt.Sprintf("question %d of %s", i+1, conv.ID)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := s.EventErr(); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, table := range []string{"conversations", "turns", "rounds", "messages", "tool_calls", "results", "result_bodies", "events"} {
		var n int
		if err := s.r.QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		counts[table] = n
	}
	// Per turn: 2 rounds, 1 assistant message each, 2 calls and results;
	// events: turn_start, 2 × (request, response), 2 tool_result, turn_end.
	want := map[string]int{"conversations": convs, "turns": convs * turns, "rounds": 2 * convs * turns, "messages": 2 * convs * turns,
		"tool_calls": 2 * convs * turns, "results": 2 * convs * turns, "result_bodies": 2 * convs * turns, "events": 8 * convs * turns}
	for k, v := range want {
		if counts[k] != v {
			t.Errorf("%s: %d rows, want %d", k, counts[k], v)
		}
	}
	for _, id := range ids {
		conv, err := s.LoadFull(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(conv.Turns) != turns {
			t.Fatalf("%s: %d turns", id, len(conv.Turns))
		}
		for _, turn := range conv.Turns {
			if turn.Input != fmt.Sprintf("question %d of %s", turn.Index, id) || turn.Outcome != harness.Answered || len(turn.Rounds) != 2 {
				t.Fatalf("%s turn %d: %q %s %d rounds", id, turn.Index, turn.Input, turn.Outcome, len(turn.Rounds))
			}
			if want := (harness.Usage{Input: 300 * turn.Index, Cached: 10, Output: 12}); turn.Usage != want {
				t.Errorf("%s turn %d usage %+v, want %+v", id, turn.Index, turn.Usage, want)
			}
			for _, res := range turn.Rounds[0].Results {
				if hashOf(res.FullText()) != hashOf(payload(id, turn.Index, res.CallID)) {
					t.Errorf("%s turn %d %s: content hash differs", id, turn.Index, res.CallID)
				}
			}
			if !strings.HasPrefix(turn.Answer(), fmt.Sprintf("answer of turn %d", turn.Index)) {
				t.Errorf("%s turn %d answer %q", id, turn.Index, turn.Answer())
			}
		}
	}
}
