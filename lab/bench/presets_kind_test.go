package benchlab

import (
	"testing"

	"github.com/agentharness/harness/guard"
)

// TestToolKind: a call's kind by its tool and, for a shell, the first
// program of its command, in the argument shapes the agents record.
func TestToolKind(t *testing.T) {
	for _, c := range []struct{ tool, args, want string }{
		{"Read", `{"file_path":"a.go"}`, "read"},
		{"read_file", `{"path":"a.go"}`, "read"},
		{"Grep", `{"pattern":"x"}`, "search"},
		{"Glob", `{"pattern":"*.go"}`, "search"},
		{"shell_command", `{"command":"sed -n '1,200p' a.go","workdir":"/w"}`, "sh:file"},
		{"shell", `{"command":["bash","-lc","rg -n foo"],"workdir":"/w"}`, "sh:search"},
		{"exec_command", `{"cmd":"cd /w && git diff"}`, "sh:git"},
		{"bash", `{"command":"cd /w && nl -ba a.go | sed -n '1,80p'"}`, "sh:file"},
		{"bash", `{"command":"go test ./..."}`, "sh:run"},
		{"bash", `{"command": "find /testbed -name \"*.py\" | head"}`, "sh:search"},
		{"mcp__github__get_pull_request", `{}`, "mcp"},
		{"Task", `{"prompt":"look"}`, "other"},
	} {
		if got := toolKind(c.tool, c.args); got != c.want {
			t.Errorf("toolKind(%q, %s) = %q, want %q", c.tool, c.args, got, c.want)
		}
	}
}

// TestKindRuleCeiling: the ceiling of a call by its kind and the spills
// so far, for each way of lowering.
func TestKindRuleCeiling(t *testing.T) {
	def := guard.DefaultMaxBytes
	for _, c := range []struct {
		rule   kindRule
		kind   string
		spills int64
		want   int
	}{
		{kindRule{other: 10 << 10}, "sh:search", 0, 10 << 10},
		{kindRule{other: 10 << 10}, "search", 0, 10 << 10},
		{kindRule{other: 10 << 10}, "sh:file", 9, def},
		{kindRule{other: 10 << 10}, "read", 9, def},
		{kindRule{lowerAfter: 4, lowered: 12 << 10}, "sh:file", 3, def},
		{kindRule{lowerAfter: 4, lowered: 12 << 10}, "read", 4, 12 << 10},
		{kindRule{other: 10 << 10, lowerAfter: 4, lowered: 12 << 10}, "sh:search", 4, 10 << 10},
		{kindRule{lowerAfter: 0, lowered: 12 << 10, shellOnly: true}, "sh:file", 0, 12 << 10},
		{kindRule{lowerAfter: 2, lowered: 12 << 10, shellOnly: true}, "read", 5, def},
		{kindRule{lowerAfter: 2, lowered: 12 << 10, quotedOnly: true}, "other", 5, def},
		{kindRule{lowerAfter: 2, lowered: 12 << 10, quotedOnly: true}, "sh:file", 2, 12 << 10},
	} {
		if got := c.rule.ceiling(c.kind, c.spills); got != c.want {
			t.Errorf("%s: ceiling(%q, %d) = %d, want %d", c.rule.name(), c.kind, c.spills, got, c.want)
		}
	}
}
