package replayengine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/replay"
	"github.com/agentharness/harness/spill"
)

// rereadRecording is one turn: cat a.log (1,000 lines, needle500XYZ on
// line 500), a call that writes needle500XYZ, cat b.log (needle700XYZ on
// line 700), a call that writes needle700XYZ, then an answer.
func rereadRecording() *replay.Recording {
	logOf := func(line int) string {
		var b strings.Builder
		for i := range 1000 {
			if i == line {
				fmt.Fprintf(&b, "line %04d: needle%dXYZ\n", i, i)
				continue
			}
			fmt.Fprintf(&b, "line %04d: nothing to see here, just ordinary log output of a build\n", i)
		}
		return b.String()
	}
	call := func(id, cmd, out string) *replay.Call {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		return &replay.Call{Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: id, Name: "bash", Args: args}}},
			Results: []*replay.Result{{CallID: id, Tool: "bash", Full: []harness.Part{harness.TextPart(out)}}}, Usage: harness.Usage{Output: 20}, HasUsage: true}
	}
	calls := []*replay.Call{
		call("call_1", "cat a.log", logOf(500)), call("use_1", "echo needle500XYZ", "ok"),
		call("call_2", "cat b.log", logOf(700)), call("use_2", "echo needle700XYZ", "ok"),
		{Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("done")}}, Final: true},
	}
	bash := harness.ToolSpec{Name: "bash", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)}
	return &replay.Recording{ID: "reread", Format: "builtin", System: "You are a coding agent.", Tools: []harness.ToolSpec{bash},
		Turns: []*replay.Turn{{Input: "find the needles", Calls: calls}}}
}

// TestReplayTellsRereads: the replay tells the preset of each recovery
// round (Config.Reread) before the results of the request it precedes go
// through the guards, so a ceiling that stops once the agent has read a
// spill file back shows the second log whole and its needle needs no
// round; without the feedback both logs are spilled and read back.
func TestReplayTellsRereads(t *testing.T) {
	for _, c := range []struct {
		name     string
		feedback bool
		rounds   int
	}{
		{"no feedback: both logs read back", false, 2},
		{"feedback: the ceiling stops after the first read", true, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var missed atomic.Bool
			var told [][]harness.ToolCall
			ceiling := (&guard.ResultPolicy{MaxBytes: 4 << 10, Preview: guard.HeadTail{}}).Guard()
			switched := func(next harness.ToolFunc) harness.ToolFunc {
				cut := ceiling(next)
				return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
					if missed.Load() {
						return next(ctx, call)
					}
					return cut(ctx, call)
				}
			}
			cfg := Config{Guards: []harness.Guard{switched}}
			if c.feedback {
				cfg.Reread = func(calls []harness.ToolCall) {
					told = append(told, calls)
					for _, call := range calls {
						if strings.Contains(string(call.Args), spill.Folder+"/") {
							missed.Store(true)
						}
					}
				}
			}
			rep, err := Replay(context.Background(), rereadRecording(), policy(c.name, cfg), nil)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Needles != 2 || len(rep.Recoveries) != c.rounds || len(rep.Unrecovered) != 0 {
				t.Fatalf("%d needles, %d recovery rounds %+v, %d unrecovered; want 2, %d, 0", rep.Needles, len(rep.Recoveries), rep.Recoveries, len(rep.Unrecovered), c.rounds)
			}
			if rep.Recoveries[0].Via["spill"] != 1 {
				t.Errorf("first round reads %v, want one page of a spill file", rep.Recoveries[0].Via)
			}
			if c.feedback && (len(told) != 1 || len(told[0]) != 1 || told[0][0].Name != "read_file") {
				t.Errorf("Reread told %v, want the one read of a spill file", told)
			}
		})
	}
}
