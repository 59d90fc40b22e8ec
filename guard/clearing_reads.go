package guard

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/agentharness/harness"
)

// readTools are tool names that return a file's content.
var readTools = map[string]bool{
	"read": true, "read_file": true, "view": true, "open": true, "cat": true,
	"str_replace_editor": true, "view_file": true,
}

// readCommand matches a shell command whose first command (after any
// "cd DIR &&") prints a file: a pager or a line filter.
var readCommand = regexp.MustCompile(`^(?:cd\s+\S+\s*&&\s*)?(?:cat|head|tail|sed|nl|awk|less|more|bat)\b`)

// writeCommand matches "cat > f" and "cat >> f": a write, not a read.
var writeCommand = regexp.MustCompile(`^(?:cd\s+\S+\s*&&\s*)?cat\s*>`)

// ReadsFile reports whether call returns a file's content: a read tool
// (read_file, view, …) or a shell command ("command" or "cmd" argument)
// that prints a file — cat, head, tail, sed, nl, awk, less, more or bat,
// possibly after "cd DIR &&" and piped into more filters. A heredoc or a
// "cat > f" is a write and does not count.
//
// It is the Skip of the measured [Settle] configuration: in recorded
// coding runs, the identifiers an agent writes in its edits come from the
// files it read, often tens of steps later, while the outputs of the
// commands it runs (installs, test runs, its own scripts, listings) are
// acted on at once.
func ReadsFile(call harness.ToolCall) bool {
	if readTools[strings.ToLower(call.Name)] {
		return true
	}
	var args map[string]any
	if json.Unmarshal(call.Args, &args) != nil {
		return false
	}
	for _, k := range []string{"command", "cmd"} {
		s, ok := args[k].(string)
		if !ok {
			continue
		}
		s = strings.TrimSpace(s)
		return readCommand.MatchString(s) && !strings.Contains(s, "<<") && !writeCommand.MatchString(s)
	}
	return false
}

// SkipFileReads is a [Settle] Skip that keeps every file read whole
// (see [ReadsFile]).
func SkipFileReads(call harness.ToolCall, _ *harness.ToolResult) bool { return ReadsFile(call) }
