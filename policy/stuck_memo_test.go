package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

// stuckTurnOf builds a conversation of one turn whose rounds call the
// lookup tool with the keys given, in order (failing on keys starting
// with "x"), each round a fresh value so pointers differ between builds.
func stuckTurnOf(keys []string) (*harness.Conversation, *harness.Turn) {
	conv := harness.NewConversation("memo")
	turn := &harness.Turn{Index: 1, Input: "find the key"}
	conv.Turns = []*harness.Turn{turn}
	for i, k := range keys {
		id := fmt.Sprintf("c%d", i+1)
		args, _ := json.Marshal(map[string]string{"key": k})
		res := harness.TextResult("value of " + k)
		if k[0] == 'x' {
			res = harness.ErrorResult("no key %q", k)
		}
		res.CallID, res.Tool = id, "lookup"
		turn.Rounds = append(turn.Rounds, &harness.Round{Index: i + 1,
			Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: id, Name: "lookup", Args: args}}},
			Results:   []*harness.ToolResult{res}})
	}
	return conv, turn
}

// TestStuckMemoMatchesFreshPolicy checks that a policy reused across the
// views of a growing turn (judging only new rounds) builds the view a
// fresh policy builds at every round: nudges in place, the same stop; and
// that a rebuilt conversation (other pointers) and changed thresholds are
// judged afresh.
func TestStuckMemoMatchesFreshPolicy(t *testing.T) {
	keys := []string{"a", "a", "a", "b", "xc", "xc", "d", "e", "d", "e", "d", "e", "f", "f", "f", "f", "f", "f"}
	ctx := context.Background()
	shared := &StuckPolicy{}
	conv, turn := stuckTurnOf(keys)
	all := turn.Rounds
	view := func(p *StuckPolicy, conv *harness.Conversation, turn *harness.Turn) *harness.View {
		v := harness.BuildView(conv, turn, "system", nil, false)
		if err := p.ApplyView(ctx, v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for n := 1; n <= len(all); n++ {
		turn.Rounds = all[:n]
		got := view(shared, conv, turn)
		fconv, fturn := stuckTurnOf(keys[:n])
		want := view(&StuckPolicy{}, fconv, fturn)
		if !reflect.DeepEqual(texts(got), texts(want)) || got.Stop != want.Stop || got.StopReason != want.StopReason {
			t.Fatalf("round %d: memo view %q (stop %q), fresh %q (stop %q)", n, texts(got), got.Stop, texts(want), want.Stop)
		}
	}
	// The same conversation rebuilt: other round pointers, same verdicts.
	rconv, rturn := stuckTurnOf(keys)
	if a, b := view(shared, rconv, rturn), view(&StuckPolicy{}, rconv, rturn); !reflect.DeepEqual(texts(a), texts(b)) || a.Stop != b.Stop {
		t.Fatal("a rebuilt conversation is judged differently")
	}
	// Other thresholds on the same turn: judged by the new ones.
	shared.NoRepeatAbort, shared.NudgeAfter = true, 2
	if a, b := view(shared, conv, turn), view(&StuckPolicy{NoRepeatAbort: true, NudgeAfter: 2}, conv, turn); !reflect.DeepEqual(texts(a), texts(b)) || a.Stop != b.Stop {
		t.Fatal("changed thresholds are not applied")
	}
}

func texts(v *harness.View) []string {
	var out []string
	for _, m := range v.Messages {
		out = append(out, string(m.Role)+": "+m.Text())
	}
	return out
}

// stuckRound is round i of a turn: one lookup call of key, failing on keys
// starting with "x".
func stuckRound(turn, i int, key string) *harness.Round {
	id := fmt.Sprintf("t%dc%d", turn, i)
	args, _ := json.Marshal(map[string]string{"key": key})
	res := harness.TextResult("value of " + key)
	if key[0] == 'x' {
		res = harness.ErrorResult("no key %q", key)
	}
	res.CallID, res.Tool = id, "lookup"
	return &harness.Round{Index: i,
		Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: id, Name: "lookup", Args: args}}},
		Results:   []*harness.ToolResult{res}}
}

// turnKeys are the calls of turn k of growConversation: progress, and in
// every 16th turn a repeat that nudges at its third round (few nudges, so
// a long conversation's views stay cheap to build).
func turnKeys(k int) []string {
	if k%16 == 0 {
		return []string{"a", "a", "a", "b"}
	}
	return []string{"a", "b"}
}

// grownRounds counts the rounds of turns first to last of growConversation.
func grownRounds(first, last int) int {
	n := 0
	for k := first; k <= last; k++ {
		n += len(turnKeys(k))
	}
	return n
}

// growConversation runs turns turns of conv the way the agent does: each
// round is appended, then the next request's view is built and p applied
// to it. It returns the last view.
func growConversation(t testing.TB, p *StuckPolicy, conv *harness.Conversation, turns int) *harness.View {
	var v *harness.View
	first := len(conv.Turns) + 1
	for k := first; k < first+turns; k++ {
		turn := &harness.Turn{Index: k, Input: fmt.Sprintf("question %d", k)}
		conv.Turns = append(conv.Turns, turn)
		for i, key := range turnKeys(k) {
			turn.Rounds = append(turn.Rounds, stuckRound(k, i+1, key))
			v = harness.BuildView(conv, turn, "system", nil, false)
			if err := p.ApplyView(context.Background(), v); err != nil {
				t.Fatal(err)
			}
		}
	}
	return v
}

// TestStuckMemoLongConversation: in a conversation of more turns than the
// memo's bound, every view judges only the round it adds (each request
// shows every earlier turn's nudges again, and a memo that forgot them
// would judge the whole conversation on every request), and the views are
// those of a fresh policy.
func TestStuckMemoLongConversation(t *testing.T) {
	const turns = stuckMemoTurns + 44
	p := &StuckPolicy{}
	conv := harness.NewConversation("long")
	last := growConversation(t, p, conv, turns)
	if want := grownRounds(1, turns); p.memo.assessed != want {
		t.Fatalf("%d round prefixes judged for %d rounds: the memo missed", p.memo.assessed, want)
	}
	fresh := harness.BuildView(conv, conv.LastTurn(), "system", nil, false)
	if err := (&StuckPolicy{}).ApplyView(context.Background(), fresh); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(texts(last), texts(fresh)) {
		t.Fatal("the memo's view differs from a fresh policy's")
	}
	if n := strings.Count(strings.Join(texts(last), "\n"), "You made the same calls 3 times"); n != turns/16 {
		t.Fatalf("%d nudges in the last view, want one every 16 turns (%d)", n, turns/16)
	}
}

// TestStuckMemoForgetsOtherConversations: past the bound, the least
// recently judged conversation is forgotten whole (and judged again, the
// same), never the one being judged; turns a conversation no longer has
// are dropped.
func TestStuckMemoForgetsOtherConversations(t *testing.T) {
	p := &StuckPolicy{}
	short := harness.NewConversation("short")
	growConversation(t, p, short, 10)
	long := harness.NewConversation("long")
	growConversation(t, p, long, stuckMemoTurns)
	if _, ok := p.memo.convs[convKey(short)]; ok {
		t.Fatal("the short conversation was kept past the bound")
	}
	judge := func(conv *harness.Conversation) int {
		before := p.memo.assessed
		v := harness.BuildView(conv, conv.LastTurn(), "system", nil, false)
		if err := p.ApplyView(context.Background(), v); err != nil {
			t.Fatal(err)
		}
		return p.memo.assessed - before
	}
	if n := judge(long); n != 0 {
		t.Fatalf("the running conversation was judged again: %d prefixes", n)
	}
	if n, want := judge(short), grownRounds(1, 10); n != want {
		t.Fatalf("the forgotten conversation: %d prefixes judged, want %d", n, want)
	}
	// The long one was judged least recently and goes; the short one stays.
	if _, ok := p.memo.convs[convKey(long)]; ok || p.memo.turns != 10 {
		t.Fatalf("after judging the short conversation: long kept %v, %d turns held", ok, p.memo.turns)
	}
	// The short conversation's turns replaced (a reload into the same
	// value): the old ones are dropped as the new ones are judged.
	short.Turns = nil
	growConversation(t, p, short, 3)
	if got := len(p.memo.convs[convKey(short)].Value.(*stuckConv).turns); got > 4 || p.memo.turns != got {
		t.Fatalf("%d turns kept of a conversation of 3 (memo counts %d)", got, p.memo.turns)
	}
}

// BenchmarkStuckLongConversation measures the policy on the last request
// of a conversation of 300 turns of 4 rounds, the memo warm: what every
// request of a long conversation costs.
func BenchmarkStuckLongConversation(b *testing.B) {
	p := &StuckPolicy{}
	conv := harness.NewConversation("bench")
	growConversation(b, p, conv, 300)
	turn := conv.LastTurn()
	b.ReportAllocs()
	for b.Loop() {
		v := harness.BuildView(conv, turn, "system", nil, false)
		if err := p.ApplyView(context.Background(), v); err != nil {
			b.Fatal(err)
		}
	}
}
