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

// TestViewEdits checks the View methods policies edit a view with: the
// messages and their origins move together.
func TestViewEdits(t *testing.T) {
	user := func(s string) Message { return Message{Role: RoleUser, Parts: []Part{TextPart(s)}} }
	texts := func(v *View) (out []string) {
		for i, m := range v.Messages {
			out = append(out, m.Text()+":"+string(rune('0'+v.Origins[i].Turn)))
		}
		return out
	}
	v := &View{}
	v.add(Message{Role: RoleSystem, Parts: []Part{TextPart("sys")}}, Origin{})
	v.add(user("a"), Origin{Turn: 1})
	v.add(user("b"), Origin{Turn: 2})
	if i, ins := v.SetNoteMessage("note"); i != 1 || !ins {
		t.Fatalf("first SetNoteMessage: %d %v", i, ins)
	}
	if i, ins := v.SetNoteMessage("note2"); i != 1 || ins {
		t.Fatalf("second SetNoteMessage: %d %v", i, ins)
	}
	if err := v.Insert(4, user("c"), Origin{Turn: 3}); err != nil {
		t.Fatal(err)
	}
	if err := v.Insert(9, user("x"), Origin{}); err == nil {
		t.Error("insert out of range: no error")
	}
	v.Keep(func(i int) bool { return v.Origins[i].Turn != 1 })
	want := []string{"sys:0", "note2:0", "b:2", "c:3"}
	if got := texts(v); !reflect.DeepEqual(got, want) {
		t.Errorf("view %v, want %v", got, want)
	}
}
