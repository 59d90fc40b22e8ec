package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentharness/harness/store/internal/storefix"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// testConcurrentRuns runs 30 conversations × 10 turns at once through the
// real agent on one store and checks that nothing is lost: row counts,
// and every result's content hash, answer and usage.
func testConcurrentRuns(t *testing.T, be *Backend) {
	const convs, turns = 30, 10
	ctx := context.Background()
	s := be.open(t, nil)
	a := storefix.NewAgent(t, s, storefix.ToolModel(nil, nil))
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
	flushEvents(ctx, t, s)
	// Per turn: 2 rounds, 1 assistant message each, 2 calls and results;
	// events: turn_start, 2 × (request, response), 2 tool_result, turn_end.
	want := map[string]int{"conversations": convs, "turns": convs * turns, "rounds": 2 * convs * turns, "messages": 2 * convs * turns,
		"tool_calls": 2 * convs * turns, "results": 2 * convs * turns, "result_bodies": 2 * convs * turns, "events": 8 * convs * turns}
	for table, n := range want {
		if got := be.Count(t, table, ""); got != n {
			t.Errorf("%s: %d rows, want %d", table, got, n)
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
				if storefix.HashOf(res.FullText()) != storefix.HashOf(storefix.Payload(id, turn.Index, res.CallID)) {
					t.Errorf("%s turn %d %s: content hash differs", id, turn.Index, res.CallID)
				}
			}
			if !strings.HasPrefix(turn.Answer(), fmt.Sprintf("answer of turn %d", turn.Index)) {
				t.Errorf("%s turn %d answer %q", id, turn.Index, turn.Answer())
			}
		}
	}
}

// testTwoStores runs two stores on one database, standing for two
// processes, each on its own conversation.
func testTwoStores(t *testing.T, be *Backend) {
	ctx := context.Background()
	stores := []store.DB{be.open(t, nil), be.open(t, nil)}
	done := make(chan error, 2)
	for i, s := range stores {
		go func() {
			conv := harness.NewConversation([]string{"c_a", "c_b"}[i])
			agent := storefix.NewAgent(t, s, storefix.ToolModel(nil, nil))
			for range 5 {
				if _, err := agent.Run(ctx, conv, "q"); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	list, err := stores[0].List(ctx)
	if err != nil || len(list) != 2 || list[0].Turns != 5 || list[1].Turns != 5 {
		t.Fatalf("after two writers: %+v %v", list, err)
	}
}

// testConversationBusy: while a turn of a conversation is being recorded,
// every other writer of it (another store, the same store, an agent, a
// deletion, a note, a save) is refused at once with ErrConversationBusy,
// and other conversations are not. Once the turn ends (or its store
// closes), the conversation takes a new turn.
func testConversationBusy(t *testing.T, be *Backend) {
	needLocks(t, be)
	ctx := context.Background()
	a, b := be.open(t, nil), be.open(t, nil)
	conv := harness.NewConversation("c_busy")
	turn := &harness.Turn{Index: 1, Input: "first"}
	if err := a.BeginTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	other := harness.NewConversation("c_busy")
	refusals := map[string]error{
		"BeginTurn in another store":  b.BeginTurn(ctx, other, &harness.Turn{Index: 1, Input: "second writer"}),
		"BeginTurn in the same store": a.BeginTurn(ctx, other, &harness.Turn{Index: 1, Input: "second writer"}),
		"Delete":                      b.Delete(ctx, "c_busy"),
		"AddNote":                     b.AddNote(ctx, other, &harness.Note{Text: "x"}),
		"Save":                        b.Save(ctx, &harness.Conversation{ID: "c_busy"}),
	}
	_, runErr := storefix.NewAgent(t, b, storefix.ToolModel(nil, nil)).Run(ctx, harness.NewConversation("c_busy"), "agent")
	refusals["an agent's run in another store"] = runErr
	_, runErr = storefix.NewAgent(t, a, storefix.ToolModel(nil, nil)).Run(ctx, harness.NewConversation("c_busy"), "agent")
	refusals["an agent's run in the same store"] = runErr
	refusals["Delete in the same store"] = a.Delete(ctx, "c_busy")
	for what, err := range refusals {
		if !errors.Is(err, store.ErrConversationBusy) {
			t.Errorf("%s during a turn: %v, want ErrConversationBusy", what, err)
		}
	}
	// Another conversation is not held up.
	if _, err := storefix.NewAgent(t, b, storefix.ToolModel(nil, nil)).Run(ctx, harness.NewConversation("c_free"), "q"); err != nil {
		t.Errorf("another conversation: %v", err)
	}
	round := &harness.Round{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("one")}}}
	if err := a.AddRound(ctx, conv, turn, round); err != nil {
		t.Fatal(err)
	}
	turn.Rounds, turn.Outcome = []*harness.Round{round}, harness.Answered
	if err := a.EndTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	// The refused writers wrote nothing.
	got, err := b.Load(ctx, "c_busy")
	if err != nil || len(got.Turns) != 1 || got.Turns[0].Input != "first" || got.Turns[0].Outcome != harness.Answered || len(got.Notes) != 0 {
		t.Fatalf("after the refusals: %+v, %v", got, err)
	}
	if _, err := storefix.NewAgent(t, b, storefix.ToolModel(nil, nil)).Run(ctx, got, "second"); err != nil {
		t.Fatalf("the next turn, from another store: %v", err)
	}
	// A store that closes mid-turn lets the conversation go.
	got, err = a.Load(ctx, "c_busy")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.BeginTurn(ctx, got, &harness.Turn{Index: 3, Input: "abandoned"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	got, err = b.Load(ctx, "c_busy")
	if err != nil || len(got.Turns) != 3 || got.Turns[2].Outcome != "" {
		t.Fatalf("after a store closed mid-turn: %+v, %v", got, err)
	}
	if _, err := storefix.NewAgent(t, b, storefix.ToolModel(nil, nil)).Run(ctx, got, "fourth"); err != nil {
		t.Errorf("the turn after an abandoned one: %v", err)
	}
}

// testRacingWriters: 8 writers, each its own store (a process of its
// own), race to record 5 turns in each of 20 conversations through the
// store API. A writer loads a conversation and begins its next turn; a
// turn in progress elsewhere refuses it (ErrConversationBusy), and a turn
// another writer finished since the load makes it stale. In the end every
// conversation has its 5 turns, each turn written whole by one writer:
// no round is lost or duplicated.
func testRacingWriters(t *testing.T, be *Backend) {
	needLocks(t, be)
	const writers = 8
	ctx := context.Background()
	r := &race{convs: 20, turns: 5, owner: map[[2]int]int{}}
	var (
		wg     sync.WaitGroup
		errs   = make(chan error, writers)
		stores = make([]store.DB, writers)
	)
	for w := range writers {
		stores[w] = be.open(t, nil)
	}
	start := time.Now()
	for w := range writers {
		wg.Go(func() {
			// A bound that only catches a livelock.
			if err := r.write(ctx, stores[w], w, writers*r.convs*r.turns*50); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start) // logged, never asserted
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	rounds := r.check(ctx, t, stores[0])
	if n := be.Count(t, "rounds", ""); rounds != r.convs*r.turns*2 || n != rounds {
		t.Errorf("%d rounds loaded, %d stored, want %d", rounds, n, r.convs*r.turns*2)
	}
	t.Logf("%d writers × %d conversations × %d turns: %d turns recorded in %v (%.0f turns/s), %d refused as busy, %d as stale, 0 lost or duplicated",
		writers, r.convs, r.turns, len(r.owner), elapsed.Round(time.Millisecond), float64(len(r.owner))/elapsed.Seconds(), r.busy, r.stale)
}

// race is the state of testRacingWriters: which writer wrote each turn,
// and how often a writer was refused.
type race struct {
	convs, turns int
	mu           sync.Mutex
	owner        map[[2]int]int // conversation, turn → writer
	busy, stale  int
}

func (r *race) convID(c int) string { return fmt.Sprintf("c_race_%02d", c) }

func (r *race) resultOf(c, turn, w int) string {
	return fmt.Sprintf("%s turn %d by writer %d", r.convID(c), turn, w)
}

// write is writer w: it writes the next turn of one conversation after
// another until every conversation has its turns, counting refusals, and
// fails after maxIterations attempts or on any other error.
func (r *race) write(ctx context.Context, s store.DB, w, maxIterations int) error {
	for i := 0; ; i++ {
		if i > maxIterations {
			return fmt.Errorf("writer %d: no progress after %d attempts", w, i)
		}
		c := (w + i) % r.convs
		done, err := writeTurn(ctx, s, r.convID(c), r.turns, w, func(turn int) string { return r.resultOf(c, turn, w) })
		switch {
		case errors.Is(err, store.ErrConversationBusy):
			r.count(&r.busy)
			continue
		case err != nil && strings.Contains(err.Error(), "load the conversation"):
			r.count(&r.stale)
			continue
		case err != nil:
			return fmt.Errorf("writer %d: %w", w, err)
		}
		if done > 0 {
			if err := r.claim(c, done, w); err != nil {
				return err
			}
		}
		if finished(ctx, s, r.convs, r.turns, r.convID) {
			return nil
		}
	}
}

func (r *race) count(n *int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*n++
}

// claim records that writer w wrote turn of conversation c; a turn
// written twice is an error.
func (r *race) claim(c, turn, w int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev, dup := r.owner[[2]int{c, turn}]; dup {
		return fmt.Errorf("turn %d of %s written by writers %d and %d", turn, r.convID(c), prev, w)
	}
	r.owner[[2]int{c, turn}] = w
	return nil
}

// check loads every conversation from s: each has its turns, each turn
// whole and written by the writer that claimed it. It returns the rounds
// loaded.
func (r *race) check(ctx context.Context, t *testing.T, s store.DB) int {
	rounds := 0
	for c := range r.convs {
		conv, err := s.LoadFull(ctx, r.convID(c))
		if err != nil {
			t.Fatal(err)
		}
		if len(conv.Turns) != r.turns {
			t.Fatalf("%s: %d turns, want %d", r.convID(c), len(conv.Turns), r.turns)
		}
		for _, turn := range conv.Turns {
			w, ok := r.owner[[2]int{c, turn.Index}]
			want := r.resultOf(c, turn.Index, w)
			if !ok || turn.Outcome != harness.Answered || len(turn.Rounds) != 2 || len(turn.Rounds[0].Results) != 1 ||
				turn.Rounds[0].Results[0].FullText() != want || turn.Input != want {
				t.Errorf("%s turn %d (writer %d, %v): %s", r.convID(c), turn.Index, w, ok, storefix.JSONOf(t, turn))
			}
			rounds += len(turn.Rounds)
		}
	}
	return rounds
}

// writeTurn records the next turn of conversation id (a tool round and an
// answer) unless it has turns turns already; it returns the index of the
// turn it wrote, 0 for none.
func writeTurn(ctx context.Context, s store.DB, id string, turns, w int, text func(turn int) string) (int, error) {
	conv, err := s.Load(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		conv, err = harness.NewConversation(id), nil
	}
	if err != nil || len(conv.Turns) >= turns {
		return 0, err
	}
	idx := len(conv.Turns) + 1
	turn := &harness.Turn{Index: idx, Input: text(idx)}
	if err := s.BeginTurn(ctx, conv, turn); err != nil {
		return 0, err
	}
	callID := fmt.Sprintf("w%d_t%d", w, idx)
	rounds := []*harness.Round{
		{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: callID, Name: "fetch", Args: json.RawMessage(`{}`)}}},
			Results: []*harness.ToolResult{harness.TextResult(text(idx))}},
		{Index: 2, Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("done")}}},
	}
	rounds[0].Results[0].CallID, rounds[0].Results[0].Tool = callID, "fetch"
	for _, r := range rounds {
		if err := s.AddRound(ctx, conv, turn, r); err != nil {
			return 0, err
		}
	}
	turn.Outcome = harness.Answered
	return idx, s.EndTurn(ctx, conv, turn)
}

// finished reports whether every conversation has its turns.
func finished(ctx context.Context, s store.DB, convs, turns int, id func(int) string) bool {
	list, err := s.List(ctx)
	if err != nil || len(list) < convs {
		return false
	}
	for _, sm := range list {
		if sm.Turns < turns {
			return false
		}
	}
	return true
}
