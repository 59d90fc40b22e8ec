package proxy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
)

// TestRouteMarkersReadable: on a client's route, the route prefix never
// reaches the upstream, a spilled result goes under the client's
// workspace (git-ignored) and names its read tool, and a re-read that
// Collapse folds names a file holding it whole, never a recall tool the
// client lacks.
func TestRouteMarkersReadable(t *testing.T) {
	wc := wireCases[0]
	r := newRig(t, nil)
	ws := t.TempDir()
	prefix, err := r.px.Route(Client{Name: "gemini", Workspace: ws, ReadTool: "read_file"})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i := range 400 {
		lines = append(lines, "line "+strings.Repeat("x", 10)+" number "+string(rune('a'+i%26))+" "+strings.Repeat("y", i%7))
	}
	text := strings.Join(lines, "\n")
	big := lockFile(100 << 10)
	r.up.Enqueue(wc.reply("m", "", nil, wiretest.Usage{}), wc.reply("m", "", nil, wiretest.Usage{}))
	steps := []step{
		{id: "c1", tool: "read_file", args: `{"file_path":"a.txt"}`, result: text},
		{id: "c2", tool: "read_file", args: `{"file_path":"a.txt"}`, result: text},
		{id: "c3", tool: "read_file", args: `{"file_path":"big.json"}`, result: big},
	}
	r.post(prefix+wc.path, wc.body("m", "hi", steps[:1]), nil)
	r.post(prefix+wc.path, wc.body("m", "hi", steps), nil)
	reqs := r.up.Requests()
	if len(reqs) != 2 || strings.Contains(reqs[1].Path, "_harness") {
		t.Fatalf("upstream got %d request(s), path %q", len(reqs), reqs[len(reqs)-1].Path)
	}
	got := contents(t, wc.format, reqs[1].Body)
	var shown []string
	for _, c := range got {
		var s string
		_ = json.Unmarshal([]byte(c), &s)
		shown = append(shown, s)
	}
	if len(shown) != 3 {
		t.Fatalf("%d results", len(shown))
	}
	if !strings.Contains(shown[1], "[collapsed:") || strings.Contains(shown[1], "recall") {
		t.Errorf("the re-read's marker:\n%.800s", shown[1])
	}
	for i, s := range shown[1:] {
		p := spillPathRE.FindString(s)
		if p == "" || !strings.HasPrefix(p, filepath.Join(ws, ".harness", "spill")) {
			t.Errorf("result %d names no spill file under the client's workspace: %q", i+2, p)
			continue
		}
		if _, err := os.Stat(p); err != nil {
			t.Errorf("result %d: %v", i+2, err)
		}
	}
	if !strings.Contains(shown[2], "your read_file tool") {
		t.Errorf("the spill marker does not name read_file:\n%.800s", shown[2])
	}
	if b, err := os.ReadFile(filepath.Join(ws, ".harness", ".gitignore")); err != nil || !strings.Contains(string(b), "*") {
		t.Errorf(".harness/.gitignore: %q, %v", b, err)
	}
}
