package harness

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestBuildViewContext shows a turn's context messages as user messages of
// their own, before or after its input as the client sent them, located in
// the turn; a summary that stands for the turn hides them with it; a turn
// with none shows its input alone.
func TestBuildViewContext(t *testing.T) {
	answer := []*Round{{Index: 1, Assistant: Message{Role: RoleAssistant, Parts: []Part{TextPart("a")}}}}
	for _, tc := range []struct {
		name  string
		turns []*Turn
		notes []*Note
		want  string // role:text@turn, one message a line
	}{
		{"none", []*Turn{{Index: 1, Input: "q", Rounds: answer}}, nil,
			"system:sys@0\nuser:q@1\nassistant:a@1\n"},
		{"before", []*Turn{{Index: 1, Input: "q", Context: []ContextMessage{{Text: "agents"}, {Text: "env"}}, Rounds: answer}}, nil,
			"system:sys@0\nuser:agents@1\nuser:env@1\nuser:q@1\nassistant:a@1\n"},
		{"both sides", []*Turn{{Index: 1, Input: "$skill", Context: []ContextMessage{{Text: "skill", AfterInput: true}, {Text: "env"}}, Rounds: answer}}, nil,
			"system:sys@0\nuser:env@1\nuser:$skill@1\nuser:skill@1\nassistant:a@1\n"},
		{"summarised", []*Turn{{Index: 1, Input: "q", Context: []ContextMessage{{Text: "env"}}, Rounds: answer}, {Index: 2, Input: "r", Context: []ContextMessage{{Text: "ide"}}}},
			[]*Note{{After: 1, Text: "summary", By: "compact"}},
			"system:sys@0\nuser:summary@0\nuser:ide@2\nuser:r@2\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conv := &Conversation{Turns: tc.turns, Notes: tc.notes}
			v := BuildView(conv, tc.turns[len(tc.turns)-1], "sys", nil, false)
			var b strings.Builder
			for i, m := range v.Messages {
				fmt.Fprintf(&b, "%s:%s@%d\n", m.Role, m.Text(), v.Origins[i].Turn)
			}
			if b.String() != tc.want {
				t.Errorf("view:\n%swant:\n%s", b.String(), tc.want)
			}
			if n := viewSize(conv, 0); tc.notes == nil && n != len(v.Messages)-1 {
				t.Errorf("viewSize %d, view has %d transcript messages", n, len(v.Messages)-1)
			}
		})
	}
}

// TestTurnContextJSON: a turn without context encodes as it did before the
// field existed, and one with context round-trips.
func TestTurnContextJSON(t *testing.T) {
	b, err := json.Marshal(&Turn{Index: 1, Input: "q"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "context") {
		t.Errorf("a turn without context encodes %s", b)
	}
	in := &Turn{Index: 1, Input: "q", Context: []ContextMessage{{Text: "env"}, {Text: "skill", AfterInput: true}}}
	b, err = json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out Turn
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Context) != 2 || out.Context[0] != in.Context[0] || out.Context[1] != in.Context[1] {
		t.Errorf("round trip of %s gave %+v", b, out.Context)
	}
}
