package storetest

import (
	"context"
	"fmt"
	"github.com/agentharness/harness/store/internal/storefix"
	"reflect"
	"testing"

	"github.com/agentharness/harness"
)

// testTurnContext checks that a turn's context messages (Turn.Context)
// come back as they were stored, in order and with their place before or
// after the input, whether the turn was saved whole (Save) or begun by a
// recorder (BeginTurn), and that deleting the conversation removes them.
func testTurnContext(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	tests := []struct {
		name string
		ctx  []harness.ContextMessage
	}{
		{"none", nil},
		{"one before", []harness.ContextMessage{{Text: "# AGENTS.md instructions for /repo\n\nbe brief"}}},
		{"one after", []harness.ContextMessage{{Text: "<skill>\nname: deploy\n</skill>", AfterInput: true}}},
		{"before and after", []harness.ContextMessage{
			{Text: "<environment_context>cwd /repo</environment_context>"},
			{Text: "<user_instructions>x</user_instructions>"},
			{Text: "<skill>s</skill>", AfterInput: true},
		}},
		// Context holds any bytes, as inputs do.
		{"odd bytes", []harness.ContextMessage{{Text: "nul \x00 and \xfe\xff bytes"}, {Text: "", AfterInput: true}}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saved := storefix.RichConversation(fmt.Sprintf("c_ctx_saved_%d", i), 100)
			saved.Turns[0].Context = tt.ctx
			if err := s.Save(ctx, saved); err != nil {
				t.Fatal(err)
			}
			for _, load := range []func(context.Context, string) (*harness.Conversation, error){s.Load, s.LoadFull} {
				got, err := load(ctx, saved.ID)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got.Turns[0].Context, tt.ctx) || got.Turns[1].Context != nil {
					t.Errorf("saved turns load with context %+v and %+v, want %+v and none", got.Turns[0].Context, got.Turns[1].Context, tt.ctx)
				}
			}
			full, err := s.LoadFull(ctx, saved.ID)
			if err != nil || !reflect.DeepEqual(full, saved) {
				t.Errorf("LoadFull of a conversation with context differs (%v)\n%s", err, storefix.JSONOf(t, full))
			}

			// A recorded turn keeps its context from BeginTurn on.
			rec := harness.NewConversation(fmt.Sprintf("c_ctx_recorded_%d", i))
			turn := &harness.Turn{Index: 1, Input: "fix the build", Context: tt.ctx}
			if err := s.BeginTurn(ctx, rec, turn); err != nil {
				t.Fatal(err)
			}
			turn.Outcome = harness.Answered
			if err := s.EndTurn(ctx, rec, turn); err != nil {
				t.Fatal(err)
			}
			got, err := s.Load(ctx, rec.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Turns) != 1 || got.Turns[0].Input != "fix the build" || !reflect.DeepEqual(got.Turns[0].Context, tt.ctx) {
				t.Errorf("a recorded turn loads as %s, want context %+v", storefix.JSONOf(t, got.Turns), tt.ctx)
			}
			if n := be.Count(t, "turn_context", rec.ID); n != len(tt.ctx) {
				t.Errorf("%d context rows stored, want %d", n, len(tt.ctx))
			}
			if err := s.Delete(ctx, rec.ID); err != nil {
				t.Fatal(err)
			}
			if n := be.Count(t, "turn_context", rec.ID); n != 0 {
				t.Errorf("%d context rows left after Delete", n)
			}
		})
	}
}
