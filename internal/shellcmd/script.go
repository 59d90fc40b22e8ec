package shellcmd

import (
	"encoding/json"
	"strings"
)

// command is the command of a shell call's arguments: a JSON object whose
// "command" (or, when that is absent, "cmd") is a string or an
// argv array such as ["bash", "-lc", "…"]. script is the command line (an
// argv's script: the argument after -c or -lc of a shell, else the words
// joined); argv says the command was an array. ok is false when the
// arguments hold no readable command.
func command(args json.RawMessage) (script string, argv, ok bool) {
	var a struct {
		Command json.RawMessage `json:"command"`
		Cmd     json.RawMessage `json:"cmd"`
	}
	if json.Unmarshal(args, &a) != nil {
		return "", false, false
	}
	raw := a.Command
	if len(raw) == 0 {
		raw = a.Cmd
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, false, s != ""
	}
	var words []string
	if json.Unmarshal(raw, &words) != nil || len(words) == 0 {
		return "", false, false
	}
	for i, w := range words {
		if (w == "-c" || w == "-lc") && i+1 < len(words) {
			return words[i+1], true, true
		}
	}
	return strings.Join(words, " "), true, true
}

// segments splits a command line into the words of its simple commands:
// the parts between pipes, ";", "&" and newlines; empty parts are left out.
func segments(script string) [][]string {
	var out [][]string
	for _, seg := range strings.FieldsFunc(script, func(r rune) bool { return r == '|' || r == ';' || r == '&' || r == '\n' }) {
		if f := strings.Fields(seg); len(f) > 0 {
			out = append(out, f)
		}
	}
	return out
}
