package replayengine

import (
	"encoding/json"
	"github.com/agentharness/harness/replay"
	"strings"

	"github.com/agentharness/harness"
)

// readOnlyCommands are shell programs that only read, when used without an
// output redirection or an in-place flag.
var readOnlyCommands = map[string]bool{
	"cat": true, "head": true, "tail": true, "sed": true, "grep": true, "egrep": true, "rg": true,
	"ls": true, "find": true, "nl": true, "wc": true, "awk": true, "less": true, "more": true,
	"tree": true, "pwd": true, "echo": true, "file": true, "stat": true, "diff": true,
	"sort": true, "uniq": true, "cut": true,
}

// shellRisk classifies one call of a shell tool (a "command" argument) the
// way a harness tool would declare it: ReadOnly when every command of the
// pipeline or list is a known reader (cat, head, sed -n, grep, ls, find,
// nl, …, and "git" with show, diff, log, status or grep) and nothing
// writes (no ">" redirection, no "sed -i", no "tee"); Destructive
// otherwise. Recorded shell agents run everything through one tool, and
// read-only is what lets dedupe and parallelism act.
func shellRisk(args json.RawMessage) harness.Risk {
	var a struct {
		Command string `json:"command"`
		Cmd     string `json:"cmd"`
	}
	if json.Unmarshal(args, &a) != nil {
		return harness.Destructive
	}
	cmd := a.Command
	if cmd == "" {
		cmd = a.Cmd
	}
	if cmd == "" || strings.Contains(cmd, ">") || strings.Contains(cmd, "`") || strings.Contains(cmd, "$(") {
		return harness.Destructive
	}
	for _, seg := range strings.FieldsFunc(cmd, func(r rune) bool { return r == '|' || r == ';' || r == '&' || r == '\n' }) {
		f := strings.Fields(seg)
		if len(f) == 0 {
			continue
		}
		if f[0] == "cd" {
			continue
		}
		if f[0] == "git" {
			if len(f) < 2 || !map[string]bool{"show": true, "diff": true, "log": true, "status": true, "grep": true}[f[1]] {
				return harness.Destructive
			}
			continue
		}
		if !readOnlyCommands[f[0]] {
			return harness.Destructive
		}
		for _, x := range f[1:] {
			if (f[0] == "sed" && strings.HasPrefix(x, "-i")) || x == "tee" || (f[0] == "find" && (x == "-delete" || x == "-exec")) {
				return harness.Destructive
			}
		}
	}
	return harness.ReadOnly
}

// specFor returns the spec of tool name offered in rec, with the risk of
// this call: shell tools (named bash or shell, taking a command) are
// classified per call by shellRisk.
func specFor(rec *replay.Recording, call harness.ToolCall) harness.ToolSpec {
	spec := harness.ToolSpec{Name: call.Name}
	for _, t := range rec.Tools {
		if t.Name == call.Name {
			spec = t
			break
		}
	}
	if spec.Risk == 0 && (call.Name == "bash" || call.Name == "shell") {
		spec.Risk = shellRisk(call.Args)
	}
	return spec
}
