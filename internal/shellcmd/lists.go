package shellcmd

import "encoding/json"

// listPrograms are the programs whose output points at things rather than
// holding text an agent goes on to quote: searches, listings and git.
var listPrograms = map[string]bool{
	"rg": true, "grep": true, "egrep": true, "fgrep": true, "find": true, "fd": true, "ls": true, "tree": true, "git": true,
}

// Lists reports whether a shell call's arguments (as [RunsProgram] reads
// them) start with a search, a listing or git: the first program of the
// line, past cd, timeout, time, env, nice and variable assignments, is
// rg, grep, find, fd, ls, tree or git. Arguments it cannot read do not
// list.
func Lists(args json.RawMessage) bool {
	script, _, ok := command(args)
	if !ok {
		return false
	}
	for _, f := range segments(script) {
		if prog, _, ok := program(f); ok {
			return listPrograms[prog]
		}
	}
	return false
}
