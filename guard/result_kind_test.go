package guard

import (
	"context"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

// spilledResult is a result some guard spilled.
func spilledResult(id string) *harness.ToolResult {
	return &harness.ToolResult{CallID: id, Tool: "bash", Cuts: []harness.Cut{{Kind: harness.CutSpilled, By: ResultPolicyName, Locator: ".harness/spill/c/" + id + "-bash.txt"}}}
}

// transcriptWith is a conversation of one turn whose rounds hold spills
// spilled results and one whole one.
func transcriptWith(spills int) *harness.Conversation {
	round := &harness.Round{Index: 1, Results: []*harness.ToolResult{{CallID: "whole", Tool: "bash"}}}
	for i := range spills {
		round.Results = append(round.Results, spilledResult("s"+string(rune('a'+i))))
	}
	return &harness.Conversation{ID: "c", Turns: []*harness.Turn{{Index: 1, Rounds: []*harness.Round{round}}}}
}

// TestResultPolicyCeilingByCall: with no MaxBytes, a search's, a listing's
// or git's output gets 8 KiB, a shell's other output 10 KiB once two
// results of the conversation (in its transcript or the call's round) are
// spilled, and the rest, a file reader's results among them, 24 KiB; a
// MaxBytes or a tool's own ceiling keeps one ceiling for every call.
func TestResultPolicyCeilingByCall(t *testing.T) {
	out := strings.Repeat("src/pkg/file.go:12: func something() { return nil }\n", 12<<10/52+1) // ≈ 12 KiB
	for _, c := range []struct {
		name   string
		policy *ResultPolicy
		tool   string
		args   string
		spills int  // spilled results in the transcript
		round  bool // one more spilled result earlier in the call's round
		want   int  // the ceiling of the model copy; 0: whole
	}{
		{"rg in a shell", nil, "bash", `{"command":"rg -n something src"}`, 0, false, listMaxBytes},
		{"git after cd, argv", nil, "shell", `{"command":["bash","-lc","cd /w && git diff"]}`, 0, false, listMaxBytes},
		{"Grep tool", nil, "Grep", `{"pattern":"something"}`, 0, false, listMaxBytes},
		{"Glob tool", nil, "Glob", `{"pattern":"**/*.go"}`, 0, false, listMaxBytes},
		{"Read tool", nil, "Read", `{"file_path":"a.go"}`, 0, false, 0},
		{"Read tool after spills", nil, "Read", `{"file_path":"a.go"}`, 5, false, 0},
		{"file print, no spill", nil, "bash", `{"command":"sed -n '1,400p' a.go"}`, 0, false, 0},
		{"file print after one spill", nil, "bash", `{"command":"sed -n '1,400p' a.go"}`, 1, false, 0},
		{"file print after two spills", nil, "bash", `{"command":"sed -n '1,400p' a.go"}`, 2, false, shellLateMaxBytes},
		{"file print after one spill and one in its round", nil, "bash", `{"command":"cat a.go"}`, 1, true, shellLateMaxBytes},
		{"search after two spills keeps the lower", nil, "bash", `{"command":"grep -rn x ."}`, 2, false, listMaxBytes},
		{"explicit MaxBytes", &ResultPolicy{MaxBytes: DefaultMaxBytes}, "bash", `{"command":"rg -n something src"}`, 2, false, 0},
		{"tool's own ceiling", &ResultPolicy{Tools: map[string]ToolLimit{"Grep": {MaxBytes: 20 << 10}}}, "Grep", `{}`, 0, false, 0},
		{"tool entry without a ceiling keeps the call's", &ResultPolicy{Tools: map[string]ToolLimit{"Grep": {}}}, "Grep", `{}`, 0, false, listMaxBytes},
	} {
		t.Run(c.name, func(t *testing.T) {
			info := harness.CallInfo{Conversation: "c", Turn: 1, Round: 2, Workspace: t.TempDir(), Transcript: transcriptWith(c.spills)}
			if c.round {
				info.Message = &harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: "before", Name: "bash"}, {ID: "call", Name: c.tool}}}
				info = info.WithRoundResults(spilledResult("before"))
			}
			ev := &rpEvents{}
			ctx := harness.WithObserver(harness.WithCallInfo(context.Background(), info), ev.observe)
			res := rpCallWith(t, c.policy.Guard(), ctx, c.tool, "call", c.args,
				&harness.ToolResult{CallID: "call", Tool: c.tool, Parts: []harness.Part{harness.TextPart(out)}})
			shown := len(rpModelText(res))
			pol := ev.kind(harness.EventPolicy)
			switch {
			case c.want == 0 && (len(res.Cuts) != 0 || len(res.Model) != 0):
				t.Errorf("cut to %d bytes (%v); want the result whole", shown, res.Cuts)
			case c.want > 0 && (len(res.Cuts) != 1 || res.Cuts[0].Kind != harness.CutSpilled || shown > c.want || len(pol) != 1):
				t.Errorf("model copy %d bytes, cuts %v, %d events; want it spilled to at most %d bytes", shown, res.Cuts, len(pol), c.want)
			case c.want > 0 && pol[0].Data["max_bytes"] != c.want:
				t.Errorf("cut at a ceiling of %v bytes; want %d", pol[0].Data["max_bytes"], c.want)
			}
		})
	}
}
