package shellcmd

import (
	"encoding/json"
	"path"
	"strings"
)

// runPrograms are the programs that run code: interpreters, test
// runners, build tools and linters. Their output is a log.
var runPrograms = map[string]bool{
	"python": true, "python3": true, "python2": true, "pytest": true, "py.test": true, "tox": true, "nox": true, "coverage": true,
	"make": true, "cmake": true, "ctest": true, "ninja": true, "npm": true, "npx": true, "pnpm": true, "yarn": true, "node": true,
	"deno": true, "bun": true, "jest": true, "vitest": true, "mocha": true, "tsc": true, "go": true, "cargo": true, "rustc": true,
	"mvn": true, "gradle": true, "java": true, "javac": true, "gcc": true, "g++": true, "clang": true, "ruby": true, "rspec": true,
	"rake": true, "bundle": true, "php": true, "phpunit": true, "dotnet": true, "swift": true, "uv": true, "poetry": true, "pip": true,
	"pip3": true, "ruff": true, "mypy": true, "flake8": true, "pylint": true, "black": true, "eslint": true, "golangci-lint": true,
	"sh": true, "bash": true, "zsh": true,
}

// RunsProgram reports whether a shell call's arguments (a JSON object
// with a "command" or "cmd" string, or an argv array such as ["bash",
// "-lc", "…"]) run a program rather than only read: a simple command of
// the line, past cd, timeout, time, env, nice and variable assignments,
// is an interpreter, test runner, build tool or linter, or a ./ path.
// Arguments it cannot read are not a run.
func RunsProgram(args json.RawMessage) bool {
	script, _, ok := command(args)
	if !ok {
		return false
	}
	for _, f := range segments(script) {
		prog, word, ok := program(f)
		if ok && (runPrograms[prog] || strings.HasPrefix(prog, "python") || strings.HasPrefix(word, "./")) {
			return true
		}
	}
	return false
}

// program is the program a simple command's words f start, past cd,
// timeout, time, env, nice and variable assignments: its base name and the
// word as written; ok is false when f holds none.
func program(f []string) (prog, word string, ok bool) {
	for len(f) > 0 {
		switch w := f[0]; {
		case w == "cd" || w == "timeout":
			f = f[min(2, len(f)):]
			continue
		case w == "time" || w == "env" || w == "nice" || w == "(" || w == "{" || strings.Contains(w, "=") && !strings.HasPrefix(w, "-"):
			f = f[1:]
			continue
		}
		break
	}
	if len(f) == 0 {
		return "", "", false
	}
	return path.Base(strings.Trim(f[0], `"'()`)), f[0], true
}
