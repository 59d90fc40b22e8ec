package mcptool

import (
	"regexp"
	"strings"
	"testing"
)

var validName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestAssignNames(t *testing.T) {
	keys := []toolKey{
		{"github", "search"}, {"github", "create_issue"}, {"jira", "search"}, {"jira", "create_issue.v2"},
		{"fs", "read"}, {"fs", "list"}, {"web", "fetch"},
	}
	got := assignNames(keys, []string{"read"})
	want := map[toolKey]string{
		{"github", "search"}:        "github__search",
		{"github", "create_issue"}:  "create_issue",
		{"jira", "search"}:          "jira__search",
		{"jira", "create_issue.v2"}: "create_issue_v2",
		{"fs", "read"}:              "fs__read",
		{"fs", "list"}:              "list",
		{"web", "fetch"}:            "fetch",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%v → %q, want %q", k, got[k], w)
		}
	}
}

func TestAssignNamesStillUnique(t *testing.T) {
	// "a.b" and "a_b" sanitize alike on one server; long names are cut.
	long := strings.Repeat("very_long_tool_name_", 5)
	keys := []toolKey{{"s", "a.b"}, {"s", "a_b"}, {"s", long + "1"}, {"s", long + "2"}, {"t", "a b"}}
	got := assignNames(keys, nil)
	seen := map[string]bool{}
	for _, k := range keys {
		n := got[k]
		if !validName.MatchString(n) {
			t.Errorf("%v → invalid name %q", k, n)
		}
		if seen[n] {
			t.Errorf("%v → duplicate name %q", k, n)
		}
		seen[n] = true
	}
}

// FuzzAssignNames: whatever the raw names, the names sent are valid for
// every provider and unique.
func FuzzAssignNames(f *testing.F) {
	f.Add("srv", "tool", "other", "tool")
	f.Add("a", "x.y/z", "a", "x_y_z")
	f.Add("", "", "", "")
	f.Add("ünï", "çödé", "s", strings.Repeat("n", 200))
	f.Fuzz(func(t *testing.T, s1, t1, s2, t2 string) {
		keys := []toolKey{{s1, t1}, {s2, t2}}
		if keys[0] == keys[1] {
			keys = keys[:1]
		}
		got := assignNames(keys, []string{"read"})
		seen := map[string]bool{}
		for _, k := range keys {
			n := got[k]
			if !validName.MatchString(n) || n == "read" || seen[n] {
				t.Fatalf("%v → %q (seen %v)", k, n, seen)
			}
			seen[n] = true
		}
	})
}
