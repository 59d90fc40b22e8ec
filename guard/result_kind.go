package guard

import (
	"context"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/shellcmd"
)

// The ceilings a [ResultPolicy] without MaxBytes gives by the call (see
// [ResultPolicy.MaxBytes]).
const (
	// listMaxBytes is the ceiling of a search's, a listing's or git's
	// output: the agent reads it for what it points at and goes on to
	// open that, rarely quoting the output itself.
	listMaxBytes = 8 << 10
	// shellLateMaxBytes is the ceiling of a shell's output once the
	// conversation has spilled shellLateAfter results: its prints run
	// large, and past the head and tail of a print the agent mostly does
	// not quote.
	shellLateMaxBytes = 10 << 10
	shellLateAfter    = 2
)

// callCeiling is the default ceiling of call, whose result is res: a
// search, a listing or git output (a shell command shellcmd.Lists, or a
// tool named for grep, glob or search) gets listMaxBytes; a shell's other
// output, when over shellLateMaxBytes, gets shellLateMaxBytes once the
// conversation's transcript and the earlier calls of the call's round
// hold shellLateAfter spilled results; anything else DefaultMaxBytes.
// A file reader's results keep DefaultMaxBytes: they are what an agent
// quotes in its edits.
func callCeiling(ctx context.Context, info harness.CallInfo, call *harness.ToolCall, res *harness.ToolResult) int {
	shell := shellcmd.IsShell(call.Name)
	switch {
	case shell && shellcmd.Lists(call.Args), searchTool(call.Name):
		return listMaxBytes
	case shell && (res.Stream != nil || ceilingSize(res.ModelParts()) > shellLateMaxBytes) &&
		spilledSoFar(ctx, info, call, shellLateAfter) >= shellLateAfter:
		return shellLateMaxBytes
	}
	return DefaultMaxBytes
}

// searchTool reports whether a tool's name says it searches or lists
// (grep, glob, search: Claude Code's Grep and Glob, Gemini CLI's
// search_file_content), a reader's excepted.
func searchTool(name string) bool {
	n := strings.ToLower(name)
	if strings.Contains(n, "read") {
		return false
	}
	return strings.Contains(n, "grep") || strings.Contains(n, "glob") || strings.Contains(n, "search")
}

// spilledSoFar counts the spilled results before call, newest first, up
// to enough: the earlier calls of its round, then the transcript's.
func spilledSoFar(ctx context.Context, info harness.CallInfo, call *harness.ToolCall, enough int) int {
	n := 0
	count := func(results []*harness.ToolResult) bool {
		for i := len(results) - 1; i >= 0 && n < enough; i-- {
			if results[i] != nil && lastSpillLocator(results[i]) != "" {
				n++
			}
		}
		return n >= enough
	}
	if count(info.RoundResults(ctx, call)) || info.Transcript == nil {
		return n
	}
	for t := len(info.Transcript.Turns) - 1; t >= 0; t-- {
		turn := info.Transcript.Turns[t]
		if turn == nil {
			continue
		}
		for r := len(turn.Rounds) - 1; r >= 0; r-- {
			if turn.Rounds[r] != nil && count(turn.Rounds[r].Results) {
				return n
			}
		}
	}
	return n
}
