package shellcmd

import (
	"encoding/json"
	"strings"
)

// readOnlyCommands are shell programs that only read, when used without an
// output redirection or an in-place flag.
var readOnlyCommands = map[string]bool{
	"cat": true, "head": true, "tail": true, "sed": true, "grep": true, "egrep": true, "rg": true,
	"ls": true, "find": true, "nl": true, "wc": true, "awk": true, "less": true, "more": true,
	"tree": true, "pwd": true, "echo": true, "file": true, "stat": true, "diff": true,
	"sort": true, "uniq": true, "cut": true,
}

// readOnlyGit are the git subcommands that only read.
var readOnlyGit = map[string]bool{"show": true, "diff": true, "log": true, "status": true, "grep": true}

// ReadOnly reports whether a shell call only reads: its "command" (or, when
// that is empty, "cmd") is a string whose every simple command is a known
// reader (cat, head, sed, grep, ls, find, nl, …, cd, and git with show,
// diff, log, status or grep) and nothing writes or substitutes (no ">",
// no backquote or "$(", no "sed -i", no "tee", no find -delete or -exec).
// Anything else, an argv array or arguments it cannot read included, may
// write.
func ReadOnly(args json.RawMessage) bool {
	var a struct {
		Command string `json:"command"`
		Cmd     string `json:"cmd"`
	}
	if json.Unmarshal(args, &a) != nil {
		return false
	}
	cmd := a.Command
	if cmd == "" {
		cmd = a.Cmd
	}
	if cmd == "" || strings.Contains(cmd, ">") || strings.Contains(cmd, "`") || strings.Contains(cmd, "$(") {
		return false
	}
	for _, f := range segments(cmd) {
		switch {
		case f[0] == "cd":
			continue
		case f[0] == "git":
			if len(f) < 2 || !readOnlyGit[f[1]] {
				return false
			}
			continue
		case !readOnlyCommands[f[0]]:
			return false
		}
		for _, x := range f[1:] {
			if (f[0] == "sed" && strings.HasPrefix(x, "-i")) || x == "tee" || (f[0] == "find" && (x == "-delete" || x == "-exec")) {
				return false
			}
		}
	}
	return true
}
