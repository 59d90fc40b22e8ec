package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
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
