package harness

import (
	"reflect"
	"testing"

	"github.com/agentharness/harness/internal/clearnote"
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
		{"clear before any summary", []*Note{{Text: clearnote.Text, By: "compact", ClearTurn: 2, ClearRound: 1}}, []*Note{mark}, clearnote.Text},
		{"clear after a summary", []*Note{summary, {After: 1, Text: summary.Text, By: "compact", ClearTurn: 2, ClearRound: 1}}, []*Note{summary, mark}, summary.Text},
		{"summary after a clear", []*Note{{Text: clearnote.Text, By: "compact", ClearTurn: 2, ClearRound: 1}, {After: 1, Text: summary.Text, By: "compact", ClearTurn: 2, ClearRound: 1}}, []*Note{mark, summary}, summary.Text},
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
				if oldConv.notesHide(turn, 1) != newConv.notesHide(turn, 1) {
					t.Errorf("turn %d: old notes hide %v, new %v", turn, oldConv.notesHide(turn, 1), newConv.notesHide(turn, 1))
				}
			}
			for _, n := range tc.new {
				if n.ClearTurn > 0 && n.Text != "" {
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
	if err := v.Insert(1, user("note"), Origin{}); err != nil {
		t.Fatal(err)
	}
	if err := v.Insert(4, user("c"), Origin{Turn: 3}); err != nil {
		t.Fatal(err)
	}
	if err := v.Insert(9, user("x"), Origin{}); err == nil {
		t.Error("insert out of range: no error")
	}
	v.Keep(func(i int) bool { return v.Origins[i].Turn != 1 })
	want := []string{"sys:0", "note:0", "b:2", "c:3"}
	if got := texts(v); !reflect.DeepEqual(got, want) {
		t.Errorf("view %v, want %v", got, want)
	}
}

// TestViewReplaceSharesSlices checks that Replace shows the parts
// given and records the cuts: shared on a message with no cuts (no room to
// append in place, so a later cut never writes into them), appended after
// the cuts a message already has; out of range is an error.
func TestViewReplaceSharesSlices(t *testing.T) {
	parts := []Part{TextPart("[placeholder]")}
	cuts := []Cut{{Kind: CutCleared, By: "compact"}}
	v := &View{}
	v.add(Message{Role: RoleTool, Parts: []Part{TextPart("long result")}}, Origin{Turn: 1})
	v.add(Message{Role: RoleTool, Parts: []Part{TextPart("other")}}, Origin{Turn: 1, Cuts: []Cut{{Kind: CutTrimmed}}})
	for i := range 2 {
		if err := v.Replace(i, parts, cuts...); err != nil {
			t.Fatal(err)
		}
		if v.Messages[i].Text() != "[placeholder]" || &v.Messages[i].Parts[0] != &parts[0] {
			t.Errorf("message %d: %q, parts not shared", i, v.Messages[i].Text())
		}
	}
	if o := v.Origins[0]; len(o.Cuts) != 1 || &o.Cuts[0] != &cuts[0] || cap(o.Cuts) != 1 {
		t.Errorf("uncut message: cuts %v not shared with no room", o.Cuts)
	}
	if o := v.Origins[1]; len(o.Cuts) != 2 || o.Cuts[0].Kind != CutTrimmed || o.Cuts[1].Kind != CutCleared {
		t.Errorf("cut message: cuts %v", o.Cuts)
	}
	v.Origins[0].Cuts = append(v.Origins[0].Cuts, Cut{Kind: CutTrimmed})
	if len(cuts) != 1 || cuts[0].Kind != CutCleared {
		t.Errorf("a later cut changed the shared slice: %v", cuts)
	}
	if err := v.Replace(2, parts, cuts...); err == nil {
		t.Error("out of range: no error")
	}
}

// TestStatsMemoIsExact checks that the figures computed with a chars memo
// are Stats' figures when the view grows, when a message at an index the
// memo holds changes to a string of the same length, and to a multi-part
// message.
func TestStatsMemoIsExact(t *testing.T) {
	tool := func(parts ...string) Message {
		m := Message{Role: RoleTool}
		for _, p := range parts {
			m.Parts = append(m.Parts, TextPart(p))
		}
		return m
	}
	memo := &charsMemo{}
	v := &View{}
	for _, step := range [][]Message{
		{tool("héllo"), tool("world")},
		{tool("héllo"), tool("world"), tool("ünïcode")},
		{tool("hèllo"), tool("wörld"), tool("ünïcode")},
		{tool("héllo"), tool("a", "bc"), tool("ünïcode")},
	} {
		v.Messages, v.Origins = step, make([]Origin, len(step))
		if got, want := v.stats(memo), v.plainStats(); got != want {
			t.Errorf("%v: memo %+v, Stats %+v", step, got, want)
		}
	}
}
