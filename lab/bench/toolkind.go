package benchlab

import "strings"

// toolKind names what a tool call's result holds, by the tool's name and,
// for a shell, the first program of its command (see shellVerb): "read"
// (a file reader), "sh:file" (a shell printing a file: cat, sed, nl …),
// "sh:search" (rg, grep, find, ls …), "sh:git", "sh:run" (any other
// program), "search" (a search or glob tool), "mcp" or "other".
func toolKind(tool, args string) string {
	t := strings.ToLower(tool)
	switch {
	case strings.Contains(t, "read") || t == "view":
		return "read"
	case strings.Contains(t, "bash") || strings.Contains(t, "shell") || strings.Contains(t, "exec"):
		return "sh:" + shellVerb(args)
	case strings.Contains(t, "grep") || strings.Contains(t, "glob") || strings.Contains(t, "search"):
		return "search"
	case strings.HasPrefix(t, "mcp"):
		return "mcp"
	}
	return "other"
}

// ToolKind is toolKind for the lab's research tests (lab/rereads).
func ToolKind(tool, args string) string { return toolKind(tool, args) }

// shellVerb is the first program of a shell call's command that is not
// cd, as a kind: file, search, git, run, or ? when the command has none.
// The command is found by its key in the arguments' JSON, with or without
// a space after the colon (mini-swe-agent writes one).
func shellVerb(args string) string {
	a := args
	for _, key := range []string{"-lc\",\"", "-lc\", \"", "\"command\":\"", "\"command\": \"", "\"cmd\":\"", "\"cmd\": \""} {
		if i := strings.Index(a, key); i >= 0 {
			a = a[i+len(key):]
			break
		}
	}
	for _, part := range strings.FieldsFunc(a, func(r rune) bool { return r == '&' || r == ';' || r == '|' }) {
		f := strings.Fields(part)
		if len(f) == 0 || f[0] == "cd" {
			continue
		}
		switch strings.Trim(f[0], "\"'") {
		case "cat", "sed", "head", "tail", "nl", "less", "awk":
			return "file"
		case "rg", "grep", "find", "ls", "fd", "tree":
			return "search"
		case "git":
			return "git"
		}
		return "run"
	}
	return "?"
}
