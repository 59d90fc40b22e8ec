package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentharness/harness/store/internal/storefix"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/store"
)

func testSaveLoadRoundTrip(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	conv := storefix.RichConversation("c_rich", 5000)
	if err := s.Save(ctx, conv); err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadFull(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(conv, got) {
		t.Fatalf("LoadFull differs from what was saved:\n%s\n---\n%s", storefix.JSONOf(t, conv), storefix.JSONOf(t, got))
	}
	lazy, err := s.Load(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	cut := lazy.Turns[0].Rounds[0].Results[0]
	if !store.Partial(cut) || cut.Parts != nil || cut.Bytes != 5000 || len(cut.Cuts) != 1 || cut.Meta["note"] != "failed" {
		t.Errorf("cut result loaded as %+v, want its model copy, cuts and meta without the payload", cut)
	}
	if cut.ModelText() != conv.Turns[0].Rounds[0].Results[0].ModelText() {
		t.Errorf("model copy differs after Load")
	}
	whole := lazy.Turns[0].Rounds[0].Results[1]
	if store.Partial(whole) || !reflect.DeepEqual(whole, conv.Turns[0].Rounds[0].Results[1]) {
		t.Errorf("an uncut result must load whole: %+v", whole)
	}
	// Views from Load and LoadFull are identical: resuming needs no payload.
	v1 := harness.BuildView(lazy, nil, "sys", nil, false)
	v2 := harness.BuildView(got, nil, "sys", nil, false)
	if !reflect.DeepEqual(v1.Messages, v2.Messages) {
		t.Errorf("the view of a lazily loaded conversation differs from the full one")
	}
	// Nothing is lost: the full payload comes back by call id.
	full, err := s.FullResult(ctx, conv.ID, cut.CallID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(full, conv.Turns[0].Rounds[0].Results[0]) {
		t.Errorf("FullResult differs from the saved result")
	}
	// Saving a lazily loaded conversation would store model copies as
	// payloads: refused.
	lazy.ID = "c_copy"
	if err := s.Save(ctx, lazy); err == nil || !strings.Contains(err.Error(), "LoadFull") {
		t.Errorf("Save of a lazily loaded conversation: err = %v", err)
	}
	if err := s.Save(ctx, conv); err == nil {
		t.Errorf("saving a conversation twice must fail")
	}
	// Ids, inputs and texts hold any bytes.
	odd := storefix.RichConversation("c_\x00\xff odd id", 100)
	odd.Turns[0].Input = "nul \x00 and \xfe\xff bytes, \\x00 escapes"
	odd.Notes[0].Text = "\x00"
	if err := s.Save(ctx, odd); err != nil {
		t.Fatal(err)
	}
	if got, err := s.LoadFull(ctx, odd.ID); err != nil || !reflect.DeepEqual(got, odd) {
		t.Errorf("a conversation of odd bytes: %v\n%s", err, storefix.JSONOf(t, got))
	}
}

func testNotFound(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	if err := s.Save(ctx, storefix.RichConversation("c_1", 100)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Load: %v", err)
	}
	if _, err := s.FullResult(ctx, "c_1", "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("FullResult: %v", err)
	}
	if err := s.Delete(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Delete: %v", err)
	}
	if _, err := s.Calls(ctx, "nope", 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Calls: %v", err)
	}
	if _, err := s.Requests(ctx, "nope", 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Requests: %v", err)
	}
}

func testReusedCallIDs(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	conv := harness.NewConversation("c_reuse")
	turn := &harness.Turn{Index: 1, Input: "x"}
	for i, text := range []string{"first", "second"} {
		turn.Rounds = append(turn.Rounds, &harness.Round{Index: i + 1,
			Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: "call_0", Name: "t"}}},
			Results:   []*harness.ToolResult{{CallID: "call_0", Tool: "t", Parts: []harness.Part{harness.TextPart(text)}}}})
	}
	conv.Turns = []*harness.Turn{turn}
	if err := s.Save(ctx, conv); err != nil {
		t.Fatal(err)
	}
	res, err := s.FullResult(ctx, conv.ID, "call_0")
	if err != nil || res.FullText() != "second" {
		t.Errorf("FullResult of a reused id = %v, %v; want the newest", res, err)
	}
}

func testStaleConversation(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	if err := s.Save(ctx, storefix.RichConversation("c_1", 100)); err != nil {
		t.Fatal(err)
	}
	fresh := harness.NewConversation("c_1") // same id, not loaded
	err := s.BeginTurn(ctx, fresh, &harness.Turn{Index: 1, Input: "hi"})
	if err == nil || !strings.Contains(err.Error(), "next is 3") {
		t.Errorf("BeginTurn of turn 1 on a stored 2-turn conversation: %v", err)
	}
	if err := s.EndTurn(ctx, fresh, &harness.Turn{Index: 7}); err == nil {
		t.Errorf("EndTurn of a turn never begun must fail")
	}
	// The refused turn did not take the conversation: a loaded one
	// continues it.
	loaded, err := s.Load(ctx, "c_1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := storefix.NewAgent(t, s, storefix.ToolModel(nil, nil)).Run(ctx, loaded, "third"); err != nil {
		t.Fatal(err)
	}
}

func testListAndDelete(t *testing.T, be *Backend) {
	ctx := context.Background()
	var (
		mu      sync.Mutex
		deleted []string
		fail    bool
	)
	s := be.open(t, &Options{OnDelete: func(ctx context.Context, id string) error {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			return errors.New("disk says no")
		}
		deleted = append(deleted, id)
		return nil
	}})
	for _, id := range []string{"c_a", "c_b"} {
		if err := s.Save(ctx, storefix.RichConversation(id, 5000)); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("%d conversations listed", len(list))
	}
	sm := list[0]
	x := storefix.RichConversation("x", 5000).Turns[0].Rounds[0].Results
	want := store.Summary{ID: sm.ID, Title: "build it", Created: time.Unix(1_800_000_000, 123456789), Updated: sm.Updated,
		Turns: 2, Rounds: 4, Calls: 3, ResultBytes: int64(5000 + x[1].Bytes + 15),
		ModelBytes: int64(len(x[0].ModelText()) + x[1].Bytes + 15),
		Usage:      harness.Usage{Input: 300, Cached: 100, CacheWrite: 7, Output: 40}, Notes: 2}
	if storefix.JSONOf(t, sm) != storefix.JSONOf(t, want) {
		t.Errorf("summary:\n%s\nwant\n%s", storefix.JSONOf(t, sm), storefix.JSONOf(t, want))
	}
	if !list[0].Updated.After(list[1].Updated) && !list[0].Updated.Equal(list[1].Updated) {
		t.Errorf("list not most recent first: %v, %v", list[0].Updated, list[1].Updated)
	}

	mu.Lock()
	fail = true
	mu.Unlock()
	if err := s.Delete(ctx, "c_a"); err == nil {
		t.Fatal("Delete must fail when its files cannot be removed")
	}
	if _, err := s.Load(ctx, "c_a"); err != nil {
		t.Fatalf("a failed Delete lost the conversation: %v", err)
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	if err := s.Delete(ctx, "c_a"); err != nil {
		t.Fatal(err)
	}
	if len(deleted) != 1 || deleted[0] != "c_a" {
		t.Errorf("OnDelete calls: %v", deleted)
	}
	if _, err := s.Load(ctx, "c_a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after Delete, Load: %v", err)
	}
	for _, table := range []string{"turns", "rounds", "messages", "tool_calls", "results", "result_bodies", "cuts", "notes", "events", "view_cuts"} {
		if n := be.Count(t, table, "c_a"); n != 0 {
			t.Errorf("%s keeps %d rows of a deleted conversation", table, n)
		}
	}
	if _, err := s.Load(ctx, "c_b"); err != nil {
		t.Errorf("Delete touched another conversation: %v", err)
	}
}

func testEventsKeepInvalidArguments(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	s.Observe(harness.Event{Kind: harness.EventToolResult, Conversation: "c_e", Turn: 1, Round: 1,
		Call: &harness.ToolCall{ID: "x", Name: "t", Args: json.RawMessage("{not json")}, Data: map[string]any{"ratio": math.NaN(), "n": 3}})
	events, err := s.Events(ctx, "c_e", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || string(events[0].Call.Args) != `"{not json"` || events[0].Data["ratio"] != "NaN" || events[0].Data["n"] != 3.0 {
		t.Errorf("event stored as %+v", events)
	}
}

// testForkLink stores the event that links a fork to its parent
// conversation (the proxy's "proxy-fork" policy event: the parent's id
// and the position where the history diverged) and reads it back, the
// same after a reopen: the link is an event, so each store keeps it as it
// keeps every event.
func testForkLink(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	fork := storefix.RichConversation("c_p-f0123456789ab", 1000)
	if err := s.Save(ctx, fork); err != nil {
		t.Fatal(err)
	}
	s.Observe(harness.Event{Kind: harness.EventPolicy, Time: time.Now(), Conversation: fork.ID, Turn: 2, Policy: "proxy-fork",
		Detail: "forked from conversation c_p at turn 2 input", Data: map[string]any{"parent": "c_p", "shared_turns": 1}})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = be.open(t, nil)
	events, err := s.Events(ctx, fork.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var found int
	for _, e := range events {
		if e.Policy != "proxy-fork" {
			continue
		}
		found++
		if e.Kind != harness.EventPolicy || e.Turn != 2 || e.Round != 0 || e.Data["parent"] != "c_p" || e.Data["shared_turns"] != 1.0 {
			t.Errorf("the fork link read back as %+v", e)
		}
	}
	if found != 1 {
		t.Errorf("%d fork links stored, want 1 (events %+v)", found, events)
	}
}

// testResume runs a turn, closes the store, reopens it, loads the
// conversation and runs a second turn whose request shows turn 1.
func testResume(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	conv := harness.NewConversation("")
	if _, err := storefix.NewAgent(t, s, storefix.ToolModel(nil, nil)).Run(ctx, conv, "first question"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = be.open(t, nil)
	loaded, err := s.Load(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		reqs []*harness.Request
	)
	res, err := storefix.NewAgent(t, s, storefix.ToolModel(&reqs, &mu)).Run(ctx, loaded, "second question")
	if err != nil {
		t.Fatal(err)
	}
	if res.Turn.Index != 2 || res.Outcome != harness.Answered {
		t.Fatalf("resumed turn %d, outcome %s", res.Turn.Index, res.Outcome)
	}
	var texts []string
	for _, m := range reqs[0].Messages {
		texts = append(texts, string(m.Role)+":"+m.Text())
	}
	joined := strings.Join(texts, "\n")
	for _, want := range []string{"user:first question", "tool:" + storefix.Payload(conv.ID, 1, "t1_a"), "assistant:answer of turn 1", "user:second question"} {
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

// testEventsAndViewCuts stores a run's events and the turn budget's trims,
// and reports both per call.
func testEventsAndViewCuts(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
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
	a, err := harness.New(model, &harness.Options{Tools: []harness.Tool{bigTool}, MaxRounds: 3, Recorder: s, Observer: harness.Observer(s.Observe),
		Policies: []harness.ViewPolicy{&policy.TurnBudget{}}})
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("c_budget")
	if _, err := a.Run(ctx, conv, "go"); err != nil {
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
	for i, e := range events {
		kinds[e.Kind]++
		if i > 0 && e.Time.Before(events[i-1].Time) {
			t.Errorf("event %d (%s) is stored after a later one", i, e.Kind)
		}
	}
	if kinds[harness.EventTurnStart] != 1 || kinds[harness.EventRequest] != 4 || kinds[harness.EventToolResult] != 3 ||
		kinds[harness.EventPolicy] != 4 || kinds[harness.EventTurnEnd] != 1 {
		t.Errorf("stored events: %v", kinds)
	}
	if one, err := s.Events(ctx, conv.ID, 2); err != nil || len(one) != 0 {
		t.Errorf("events of a turn that never ran: %d, %v", len(one), err)
	}
}

// testTurnEndStoredOnce observes the turn_end of a turn twice before its
// end is written, as a driver that retries a failed end write does (the
// failed write's copy requeued, the retry's behind it), and once more
// after it: the store keeps the first copy only. A turn_end of another
// turn, or of the same turn of another conversation, is kept.
func testTurnEndStoredOnce(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	conv := harness.NewConversation("c_end")
	turn := &harness.Turn{Index: 1, Input: "go", Started: time.Now()}
	conv.Turns = append(conv.Turns, turn)
	if err := s.BeginTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	end := func(convID string, idx int, detail string) {
		s.Observe(harness.Event{Kind: harness.EventTurnEnd, Conversation: convID, Turn: idx, Outcome: harness.Answered, Detail: detail, Time: time.Now()})
	}
	end(conv.ID, 1, "first")
	end(conv.ID, 1, "retried")
	end("c_other", 1, "other conversation")
	turn.Outcome, turn.Ended = harness.Answered, time.Now()
	if err := s.EndTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	end(conv.ID, 1, "late")
	end(conv.ID, 2, "next turn")
	flushEvents(ctx, t, s)
	for _, c := range []struct {
		conv string
		turn int
		want []string
	}{{conv.ID, 1, []string{"first"}}, {conv.ID, 2, []string{"next turn"}}, {"c_other", 1, []string{"other conversation"}}} {
		evs, err := s.Events(ctx, c.conv, c.turn)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range evs {
			got = append(got, e.Detail)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("turn_end events of turn %d of %s: %q, want %q", c.turn, c.conv, got, c.want)
		}
	}
}

// testNotes stores a note during a turn (as a compaction policy does) and
// one beside it, and loads them in order with their clearing marks: a
// note in the old shape (a summary's text and a mark in one row), a
// clearing mark of its own (no text) and a summary.
func testNotes(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	note := harness.ViewPolicyFunc(func(ctx context.Context, v *harness.View) error {
		if v.Round == 2 {
			v.AddNote(&harness.Note{After: 0, Text: "summary \x00 of round 1", By: "compact", ClearTurn: 1, ClearRound: 1})
			v.AddNote(&harness.Note{By: "compact", ClearTurn: 1, ClearRound: 1})
		}
		return nil
	})
	conv := harness.NewConversation("c_notes")
	if _, err := storefix.NewAgent(t, s, storefix.ToolModel(nil, nil), note).Run(ctx, conv, "q"); err != nil {
		t.Fatal(err)
	}
	if err := s.AddNote(ctx, conv, &harness.Note{After: 1, Text: "between turns"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []*harness.Note{{After: 0, Text: "summary \x00 of round 1", By: "compact", ClearTurn: 1, ClearRound: 1}, {By: "compact", ClearTurn: 1, ClearRound: 1}, {After: 1, Text: "between turns"}}
	if !reflect.DeepEqual(got.Notes, want) {
		t.Errorf("notes %s, want %s", storefix.JSONOf(t, got.Notes), storefix.JSONOf(t, want))
	}
	if clearMark(got.Notes[0]) || !clearMark(got.Notes[1]) || got.Summary() != got.Notes[2] {
		t.Errorf("kinds after load: mark %v %v, summary %+v", clearMark(got.Notes[0]), clearMark(got.Notes[1]), got.Summary())
	}
	if list, err := s.List(ctx); err != nil || list[0].Notes != 3 {
		t.Errorf("listed notes: %+v, %v", list, err)
	}
}

// testCutRefsSurviveReopen runs a real agent whose third read spans the
// first two: guard.Collapse points its model copy at both (Cut.Refs has
// two calls). After the store is closed and reopened, every way of reading
// cuts gives back the cuts the run made, Refs included.
func testCutRefsSurviveReopen(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	a, err := harness.New(storefix.ReadsModel([2]int{1, 30}, [2]int{31, 60}, [2]int{21, 50}), &harness.Options{
		Tools: []harness.Tool{storefix.ReadLinesTool(storefix.LineFile(80))}, Guards: []harness.Guard{(&guard.Collapse{}).Guard()}, Recorder: s,
	})
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("c_refs")
	if _, err := a.Run(ctx, conv, "read the notes"); err != nil {
		t.Fatal(err)
	}
	live := conv.Turns[0].Rounds[2].Results[0]
	if len(live.Cuts) != 1 || !reflect.DeepEqual(live.Cuts[0].Refs, []string{"read_1", "read_2"}) {
		t.Fatalf("the third read was not collapsed onto both earlier reads: %+v", live.Cuts)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = be.open(t, nil)
	liveCuts := storefix.CutsByCall(conv)
	for name, load := range map[string]func(context.Context, string) (*harness.Conversation, error){"Load": s.Load, "LoadFull": s.LoadFull} {
		got, err := load(ctx, conv.ID)
		if err != nil {
			t.Fatal(err)
		}
		if g := storefix.CutsByCall(got); !reflect.DeepEqual(g, liveCuts) {
			t.Errorf("%s: cuts %+v, the run made %+v", name, g, liveCuts)
		}
	}
	full, err := s.FullResult(ctx, conv.ID, "read_3")
	if err != nil || !reflect.DeepEqual(full.Cuts, live.Cuts) {
		t.Errorf("FullResult: cuts %+v (%v), the run made %+v", full.Cuts, err, live.Cuts)
	}
	calls, err := s.Calls(ctx, conv.ID, 0)
	if err != nil || len(calls) != 3 {
		t.Fatalf("Calls: %d, %v", len(calls), err)
	}
	for _, c := range calls {
		if !reflect.DeepEqual(c.Cuts, liveCuts[c.CallID]) {
			t.Errorf("Calls: %s has cuts %+v, the run made %+v", c.CallID, c.Cuts, liveCuts[c.CallID])
		}
	}
}

// testCutRefsByteForByte saves cuts whose Refs are nil, empty, and call
// ids no JSON string could carry as they are (invalid UTF-8, NUL, a quote):
// they load exactly as saved.
func testCutRefsByteForByte(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	refs := [][]string{nil, {}, {"call_a", "call_b"}, {"\xff\xfe", "x\x00y", `"quoted"`, "é🙂", "", "<&>"}}
	round := &harness.Round{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant}}
	for i, r := range refs {
		id := fmt.Sprintf("c%d", i)
		of := ""
		if len(r) > 0 {
			of = r[0]
		}
		round.Assistant.ToolCalls = append(round.Assistant.ToolCalls, harness.ToolCall{ID: id, Name: "read", Args: json.RawMessage(`{}`)})
		round.Results = append(round.Results, &harness.ToolResult{CallID: id, Tool: "read", Parts: []harness.Part{harness.TextPart("full " + id)},
			Model: []harness.Part{harness.TextPart("[collapsed]")}, Bytes: 6 + len(id),
			Cuts: []harness.Cut{{Kind: harness.CutDeduped, By: "collapse", BytesIn: 6 + len(id), BytesOut: 11, Locator: "call:" + id, Of: of, Refs: r}}})
	}
	conv := &harness.Conversation{ID: "c_bytes", Turns: []*harness.Turn{{Index: 1, Input: "q", Rounds: []*harness.Round{round}}}}
	if err := s.Save(ctx, conv); err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadFull(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, res := range got.Turns[0].Rounds[0].Results {
		if want := refs[i]; !reflect.DeepEqual(res.Cuts[0].Refs, want) {
			t.Errorf("refs %d: got %#v, saved %#v", i, res.Cuts[0].Refs, want)
		}
	}
}

// testLazyPayloads checks that Load leaves a cut result's payload in the
// store and List counts it, while FullResult returns all 5 MB.
func testLazyPayloads(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	if err := s.Save(ctx, storefix.CutConversation("c_big", 5<<20)); err != nil {
		t.Fatal(err)
	}
	conv, err := s.Load(ctx, "c_big")
	if err != nil {
		t.Fatal(err)
	}
	res := conv.Turns[0].Rounds[0].Results[0]
	if !store.Partial(res) || res.Bytes != 5<<20 || res.Parts != nil {
		t.Errorf("the 5 MB result loaded with %d bytes of payload", len(res.FullText()))
	}
	if small := conv.Turns[0].Rounds[0].Results[1]; store.Partial(small) || small.FullText() != "small result call_1" {
		t.Errorf("an uncut result loads as %+v", small)
	}
	full, err := s.FullResult(ctx, "c_big", "call_0")
	if err != nil || len(full.FullText()) != 5<<20 || full.FullText() != storefix.CutConversation("x", 5<<20).Turns[0].Rounds[0].Results[0].FullText() {
		t.Errorf("FullResult: %v", err)
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 1 || list[0].ResultBytes < 5<<20 {
		t.Errorf("List: %+v, %v", list, err)
	}
}

// clearMark reports whether n is a clearing mark only: it clears results
// (ClearTurn set) and carries no summary text.
func clearMark(n *harness.Note) bool { return n != nil && n.Text == "" && n.ClearTurn > 0 }
