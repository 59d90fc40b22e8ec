package benchlab

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/replayengine"
	"github.com/agentharness/harness/replay"
)

// feedbackRecording is one turn: cat a.log (800 lines, about 56 KB, a
// needle on line 400), a call quoting the needle, the same for b.log, then
// an answer.
func feedbackRecording() *replay.Recording {
	logOf := func(name string) string {
		var b strings.Builder
		for i := range 800 {
			if i == 400 {
				fmt.Fprintf(&b, "line %04d: needle%sXYZ\n", i, name)
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
	bash := harness.ToolSpec{Name: "bash", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)}
	return &replay.Recording{ID: "feedback", Format: "builtin", System: "You are a coding agent.", Tools: []harness.ToolSpec{bash},
		Turns: []*replay.Turn{{Input: "find the needles", Calls: []*replay.Call{
			call("call_1", "cat a.log", logOf("Alpha")), call("use_1", "echo needleAlphaXYZ", "ok"),
			call("call_2", "cat b.log", logOf("Beta")), call("use_2", "echo needleBetaXYZ", "ok"),
			{Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("done")}}, Final: true},
		}}}}
}

// TestFeedbackPresets: harness spills both logs and reads each back;
// harness+feedback, told of the first read of a spill file, shows the
// second log whole (under its raised 64 KiB ceiling), so only the first
// needle costs a round.
func TestFeedbackPresets(t *testing.T) {
	for _, c := range []struct {
		preset string
		rounds int
	}{{"harness", 2}, {"harness+feedback", 1}} {
		t.Run(c.preset, func(t *testing.T) {
			p, err := Lookup(c.preset)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := replayengine.Replay(context.Background(), feedbackRecording(), p.Policy(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Needles != 2 || len(rep.Recoveries) != c.rounds || len(rep.Unrecovered) != 0 {
				t.Errorf("%d needles, %d recovery rounds %+v, %d unrecovered; want 2, %d, 0", rep.Needles, len(rep.Recoveries), rep.Recoveries, len(rep.Unrecovered), c.rounds)
			}
		})
	}
}
