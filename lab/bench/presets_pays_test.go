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

// paysRecording is one turn: calls of tool name with their outputs, in
// order, then a call that quotes needleEarlyXYZ and a final answer.
func paysRecording(name string, calls ...[2]string) *replay.Recording {
	call := func(id, tool, cmd, out string) *replay.Call {
		args, _ := json.Marshal(map[string]string{"command": cmd, "file_path": cmd})
		return &replay.Call{Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: id, Name: tool, Args: args}}},
			Results: []*replay.Result{{CallID: id, Tool: tool, Full: []harness.Part{harness.TextPart(out)}}}, Usage: harness.Usage{Output: 20}, HasUsage: true}
	}
	var cs []*replay.Call
	for i, c := range calls {
		cs = append(cs, call(fmt.Sprintf("call_%d", i), name, c[0], c[1]))
	}
	cs = append(cs, call("use_1", "bash", "echo needleEarlyXYZ", "ok"),
		&replay.Call{Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("done")}}, Final: true})
	spec := func(n string) harness.ToolSpec {
		return harness.ToolSpec{Name: n, InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)}
	}
	return &replay.Recording{ID: "pays", Format: "builtin", System: "You are a coding agent.", Tools: []harness.ToolSpec{spec("bash"), spec("Read")},
		Turns: []*replay.Turn{{Input: "find the needle", Calls: cs}}}
}

// linesAt is n lines of ordinary output with needleEarlyXYZ on line at.
func linesAt(n, at int) string {
	var b strings.Builder
	for i := range n {
		if i == at {
			fmt.Fprintf(&b, "line %04d: needleEarlyXYZ\n", i)
			continue
		}
		fmt.Fprintf(&b, "line %04d: nothing to see here, just ordinary output of a build\n", i)
	}
	return b.String()
}

// TestPaysPresets: a test run's output of 5 KB after a 20 KB print is cut
// by harness's run ceiling and read back; harness+runpays/100 keeps it
// whole (3 KB hidden × 2 requests is under the view's 20 KB), /10 cuts it.
// A 30 KB file read with the needle a quarter in is read back under
// harness (4 KiB preview) and shown by harness+readhead/20k's head.
func TestPaysPresets(t *testing.T) {
	run := paysRecording("bash", [2]string{"cat big.txt", strings.Repeat("filler line of a printed file\n", 700)}, [2]string{"make test", linesAt(70, 35)})
	read := paysRecording("Read", [2]string{"src/a.go", linesAt(460, 100)})
	for _, c := range []struct {
		preset string
		rec    *replay.Recording
		rounds int
	}{
		{"harness", run, 1}, {"harness+runpays/10", run, 1}, {"harness+runpays/100", run, 0},
		{"harness", read, 1}, {"harness+readhead/20k", read, 0}, {"harness+rereadstop", read, 1},
	} {
		kind := "run"
		if c.rec == read {
			kind = "read"
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
