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

// lateRecording is one turn of bash calls: first (at the conversation's
// first round) prints out, then a call quotes needleEarlyXYZ, a line of
// out; pad calls follow, so that later results arrive after many rounds.
func lateRecording(first, out string) *replay.Recording {
	call := func(id, cmd, out string) *replay.Call {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		return &replay.Call{Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: id, Name: "bash", Args: args}}},
			Results: []*replay.Result{{CallID: id, Tool: "bash", Full: []harness.Part{harness.TextPart(out)}}}, Usage: harness.Usage{Output: 20}, HasUsage: true}
	}
	bash := harness.ToolSpec{Name: "bash", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)}
	calls := []*replay.Call{call("call_1", first, out), call("use_1", "echo needleEarlyXYZ", "ok")}
	return &replay.Recording{ID: "late", Format: "builtin", System: "You are a coding agent.", Tools: []harness.ToolSpec{bash},
		Turns: []*replay.Turn{{Input: "find the needle", Calls: append(calls,
			&replay.Call{Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("done")}}, Final: true})}}}
}

// lines is n lines of ordinary output with needleEarlyXYZ on the middle one.
func lines(n int) string {
	var b strings.Builder
	for i := range n {
		if i == n/2 {
			fmt.Fprintf(&b, "line %04d: needleEarlyXYZ\n", i)
			continue
		}
		fmt.Fprintf(&b, "line %04d: nothing to see here, just ordinary output of a build\n", i)
	}
	return b.String()
}

// TestLatePresets: a file printed at the conversation's first round (56
// KB) is spilled by harness and read back; harness+late/N keeps it whole.
// A test run's output (5 KB) is cut by the run ceiling under harness and
// harness+late/2, and kept whole by harness+late/2+run.
func TestLatePresets(t *testing.T) {
	file := lateRecording("cat a.log", lines(800))
	run := lateRecording("make test", lines(70))
	for _, c := range []struct {
		preset string
		rec    *replay.Recording
		rounds int
	}{
		{"harness", file, 1}, {"harness+late/2", file, 0}, {"harness+late/4", file, 0},
		{"harness", run, 1}, {"harness+late/2", run, 1}, {"harness+late/2+run", run, 0},
	} {
		kind := "file"
		if c.rec == run {
			kind = "run"
		}
		t.Run(c.preset+" "+kind, func(t *testing.T) {
			p, err := Lookup(c.preset)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := replayengine.Replay(context.Background(), c.rec, p.Policy(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Needles != 1 || len(rep.Recoveries) != c.rounds || len(rep.Unrecovered) != 0 {
				t.Errorf("%d needles, %d recovery rounds, %d unrecovered; want 1, %d, 0", rep.Needles, len(rep.Recoveries), len(rep.Unrecovered), c.rounds)
			}
		})
	}
}
