package guard

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

func TestReadsFile(t *testing.T) {
	shell := func(cmd string) harness.ToolCall {
		b, _ := json.Marshal(map[string]string{"command": cmd})
		return harness.ToolCall{Name: "bash", Args: b}
	}
	cases := []struct {
		call harness.ToolCall
		want bool
	}{
		{harness.ToolCall{Name: "read_file", Args: json.RawMessage(`{"path":"a.go"}`)}, true},
		{harness.ToolCall{Name: "View"}, true},
		{shell("cat src/sqlfluff/rules/L036.py"), true},
		{shell("cat -n pydicom/jsonrep.py | head -250"), true},
		{shell("sed -n '142,254p' src/sqlfluff/rules/L003.py"), true},
		{shell("head -100 src/sqlfluff/rules/L003.py"), true},
		{shell("  cd /testbed && nl -ba setup.py"), true},
		{harness.ToolCall{Name: "shell", Args: json.RawMessage(`{"cmd":"tail -n 50 build.log"}`)}, true},
		{shell("cat > test.py << 'EOF'\nprint(1)\nEOF"), false},
		{shell("cat >> notes.txt"), false},
		{shell("python -m pytest -x"), false},
		{shell("pip install -e ."), false},
		{shell("ls -la"), false},
		{shell("grep -rn foo src"), false},
		{shell("category_tool --list"), false},
		{harness.ToolCall{Name: "bash", Args: json.RawMessage(`not json`)}, false},
		{harness.ToolCall{Name: "grep", Args: json.RawMessage(`{"pattern":"x"}`)}, false},
	}
	for _, c := range cases {
		if got := ReadsFile(c.call); got != c.want {
			t.Errorf("ReadsFile(%s %s) = %v, want %v", c.call.Name, c.call.Args, got, c.want)
		}
	}
}

// FuzzReadsFile checks that any arguments classify without panicking, and
// that a heredoc is never taken for a read.
func FuzzReadsFile(f *testing.F) {
	for _, s := range []string{`{"command":"cat a.go"}`, `{"cmd":"sed -n 1,5p x"}`, `{"command":"cat > a << EOF"}`, `{"command":7}`, `[]`, ``, `{"command":"cd d && head f"}`} {
		f.Add("bash", s)
	}
	f.Fuzz(func(t *testing.T, name, args string) {
		call := harness.ToolCall{Name: name, Args: json.RawMessage(args)}
		got := ReadsFile(call)
		var a map[string]any
		if got && !readTools[strings.ToLower(name)] && json.Unmarshal(call.Args, &a) == nil {
			for _, k := range []string{"command", "cmd"} {
				if s, ok := a[k].(string); ok && strings.Contains(s, "<<") {
					t.Fatalf("heredoc %q taken for a read", s)
				}
			}
		}
	})
}
