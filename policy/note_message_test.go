package policy

import (
	"reflect"
	"testing"

	"github.com/agentharness/harness"
)

// TestNoteMessage checks that the note message goes right after the system
// prompt: inserted the first time, replaced after, its origin moving with
// it, and first in a view without a system prompt.
func TestNoteMessage(t *testing.T) {
	user := func(s string) harness.Message {
		return harness.Message{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart(s)}}
	}
	texts := func(v *harness.View) (out []string) {
		for i, m := range v.Messages {
			out = append(out, m.Text()+":"+string(rune('0'+v.Origins[i].Turn)))
		}
		return out
	}
	v := &harness.View{
		Messages: []harness.Message{{Role: harness.RoleSystem, Parts: []harness.Part{harness.TextPart("sys")}}, user("a"), user("b")},
		Origins:  []harness.Origin{{}, {Turn: 1}, {Turn: 2}},
	}
	if i, ins := noteMessage(v, "note"); i != 1 || !ins {
		t.Fatalf("first note message: %d %v", i, ins)
	}
	if i, ins := noteMessage(v, "note2"); i != 1 || ins {
		t.Fatalf("second note message: %d %v", i, ins)
	}
	if want := []string{"sys:0", "note2:0", "a:1", "b:2"}; !reflect.DeepEqual(texts(v), want) {
		t.Errorf("view %v, want %v", texts(v), want)
	}
	bare := &harness.View{Messages: []harness.Message{user("a")}, Origins: []harness.Origin{{Turn: 1}}}
	if i, ins := noteMessage(bare, "note"); i != 0 || !ins || !reflect.DeepEqual(texts(bare), []string{"note:0", "a:1"}) {
		t.Errorf("no system prompt: at %d (inserted %v), view %v", i, ins, texts(bare))
	}
}
