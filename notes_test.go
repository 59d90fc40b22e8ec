package harness

import (
	"reflect"
	"testing"
)

// TestClearMarksAreNotSummaries checks that a clearing mark of its own and
// a clearing note in the old shape (which copied the newest summary, or the
// notice) build the same views, and that a mark copies no text.
func TestClearMarksAreNotSummaries(t *testing.T) {
	turns := func() []*Turn {
		var ts []*Turn
		for i := 1; i <= 3; i++ {
			ts = append(ts, &Turn{Index: i, Input: "q", Rounds: []*Round{{Index: 1, Assistant: Message{Role: RoleAssistant, Parts: []Part{TextPart("a")}}}}})
		}
		return ts
	}
	summary := &Note{After: 1, Text: "summary of turn 1", By: "compact"}
	mark := &Note{By: "compact", ClearTurn: 2, ClearRound: 1}
	for _, tc := range []struct {
		name     string
		old, new []*Note
		first    string
	}{
		{"clear before any summary", []*Note{{Text: ClearedNotice, By: "compact", ClearTurn: 2, ClearRound: 1}}, []*Note{mark}, ClearedNotice},
		{"clear after a summary", []*Note{summary, {After: 1, Text: summary.Text, By: "compact", ClearTurn: 2, ClearRound: 1}}, []*Note{summary, mark}, summary.Text},
		{"summary after a clear", []*Note{{Text: ClearedNotice, By: "compact", ClearTurn: 2, ClearRound: 1}, {After: 1, Text: summary.Text, By: "compact", ClearTurn: 2, ClearRound: 1}}, []*Note{mark, summary}, summary.Text},
		{"summary only", []*Note{summary}, []*Note{summary}, summary.Text},
	} {
		t.Run(tc.name, func(t *testing.T) {
			oldConv := &Conversation{Turns: turns(), Notes: tc.old}
			newConv := &Conversation{Turns: turns(), Notes: tc.new}
			ov, nv := BuildView(oldConv, nil, "sys", nil, false), BuildView(newConv, nil, "sys", nil, false)
			if !reflect.DeepEqual(ov.Messages, nv.Messages) || !reflect.DeepEqual(ov.Origins, nv.Origins) {
				t.Fatalf("old-shape notes view %+v, new %+v", ov.Messages, nv.Messages)
			}
			if got := nv.Messages[1].Text(); got != tc.first {
				t.Errorf("note message %q, want %q", got, tc.first)
			}
			for turn := 1; turn <= 3; turn++ {
				if oldConv.NotesHide(turn, 1) != newConv.NotesHide(turn, 1) {
					t.Errorf("turn %d: old notes hide %v, new %v", turn, oldConv.NotesHide(turn, 1), newConv.NotesHide(turn, 1))
				}
			}
			for _, n := range tc.new {
				if n.ClearTurn > 0 && (!n.IsClearMark() || n.Text != "") {
					t.Errorf("mark %+v carries text", n)
				}
			}
		})
	}
}
