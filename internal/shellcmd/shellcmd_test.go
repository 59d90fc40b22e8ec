package shellcmd

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestClassify pins what each classifier says of one call's arguments:
// RunsProgram (a log-producing run), Lists (a search, a listing or git)
// and ReadOnly (only reads).
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		args           string
		run, lists, ro bool
	}{
		{`{"command": "python -m pytest tests/test_x.py -q"}`, true, false, false},
		{`{"command": "cd /testbed && python reproduce.py"}`, true, false, false},
		{`{"command": "cd /testbed && PYTHONPATH=. timeout 60 pytest -x"}`, true, false, false},
		{`{"command": "./run_tests.sh --fast"}`, true, false, false},
		{`{"command": "go test ./... 2>&1 | tail -20"}`, true, false, false},
		{`{"command": "env CI=1 nice make check"}`, true, false, false},
		{`{"command": "/usr/bin/python3.11 x.py"}`, true, false, false},
		{`{"cmd": ["bash", "-lc", "npm test"]}`, true, false, false},
		{`{"command": ["bash", "-lc", "sed -n '1,80p' src/app.py"]}`, false, false, false},
		{`{"command": ["cat", "a.py"]}`, false, false, false},
		{`{"command": "cat src/app.py"}`, false, false, true},
		{`{"cmd": "cat src/app.py"}`, false, false, true},
		{`{"command": "", "cmd": "ls"}`, false, false, true},
		{`{"command": "grep -rn 'def foo' src | head"}`, false, true, true},
		{`{"command": "cd /testbed && git diff"}`, false, true, true},
		{`{"command": "git log --oneline | head -5; git status"}`, false, true, true},
		{`{"command": "git commit -m x"}`, false, true, false},
		{`{"command": "git"}`, false, true, false},
		{`{"command": "find . -name '*.py' | xargs wc -l"}`, false, true, false},
		{`{"command": "find . -name '*.pyc' -delete"}`, false, true, false},
		{`{"command": "sed -i s/a/b/ x.py"}`, false, false, false},
		{`{"command": "cat a | tee b"}`, false, false, false},
		{`{"command": "cat a > b"}`, false, false, false},
		{`{"command": "cat $(ls)"}`, false, false, false},
		{"{\"command\": \"cat `ls`\"}", false, false, false},
		{`{"command": ["bash", "-lc", "rg -n foo src"]}`, false, true, false},
		{`{"command": "FOO=1 timeout 9 fd -e go"}`, false, true, false},
		{`{"command": "tree -L 2; cat a"}`, false, true, true},
		{`{"command": "cat a; ls"}`, false, false, true},
		{`{"command": "curl -s http://localhost:8000/"}`, false, false, false},
		{`{"command": "edit 10:12\nfoo = 1\nend_of_edit"}`, false, false, false},
		{`{"command": ""}`, false, false, false},
		{`{"path": "a.py"}`, false, false, false},
		{`not json`, false, false, false},
		{`{"command": 42}`, false, false, false},
	} {
		if got := RunsProgram(json.RawMessage(tc.args)); got != tc.run {
			t.Errorf("RunsProgram(%s) = %v, want %v", tc.args, got, tc.run)
		}
		if got := Lists(json.RawMessage(tc.args)); got != tc.lists {
			t.Errorf("Lists(%s) = %v, want %v", tc.args, got, tc.lists)
		}
		if got := ReadOnly(json.RawMessage(tc.args)); got != tc.ro {
			t.Errorf("ReadOnly(%s) = %v, want %v", tc.args, got, tc.ro)
		}
	}
}

// TestIsShell checks the shell tool names, compared case-insensitively.
func TestIsShell(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"bash", true}, {"Bash", true}, {"run_shell_command", true}, {"exec_command", true}, {"SHELL", true},
		{"read_file", false}, {"bashful", false}, {"", false},
	} {
		if got := IsShell(tc.name); got != tc.want {
			t.Errorf("IsShell(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// FuzzClassify runs the classifiers on any arguments: they never panic, a
// command that redirects or substitutes is never read-only, and a cd before
// a command does not change whether it lists.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{`{"command": "pytest"}`, `{"cmd": ["bash", "-lc", "cat a"]}`, `{"command": "cd a && A=1 timeout 5 ./x"}`,
		`{"command": ["-c"]}`, `{"command": "git show HEAD | head"}`, `{"command": "cat a > b"}`, `{}`, `[`, `{"command": null, "cmd": "ls"}`,
		`{"command": "rg -n x | head"}`, `{"command": "FOO=1 env fd x; make"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		RunsProgram(json.RawMessage(s))
		if script, argv, ok := command(json.RawMessage(s)); ok && !argv {
			cd, _ := json.Marshal(map[string]string{"command": "cd /w && " + script})
			if Lists(cd) != Lists(json.RawMessage(s)) {
				t.Errorf("Lists(%s) = %v, but %v after a cd", s, Lists(json.RawMessage(s)), Lists(cd))
			}
		}
		ro := ReadOnly(json.RawMessage(s))
		var a struct{ Command, Cmd string }
		if ro && json.Unmarshal([]byte(s), &a) == nil {
			cmd := a.Command
			if cmd == "" {
				cmd = a.Cmd
			}
			if strings.ContainsAny(cmd, ">`") || strings.Contains(cmd, "$(") {
				t.Errorf("ReadOnly(%s) = true for a command that redirects or substitutes", s)
			}
		}
	})
}
