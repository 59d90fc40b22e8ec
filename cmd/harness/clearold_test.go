package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunClearsOldResultsForCost runs a scripted agent that reads 45 files
// of about 30 KB each through the CLI with an 8 KiB ceiling: each result
// is spilled at arrival with a preview (a saving the compaction's bank
// draws on), and far below any
// window the default compaction clears the old previews (a clear-old
// event); the run's cache-aware cost, computed from the usage it reports,
// is lower than with --clear-old 0.
func TestRunClearsOldResultsForCost(t *testing.T) {
	ws := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	var steps []map[string]any
	for i := range 45 {
		var b strings.Builder
		for j := range 2600 {
			fmt.Fprintf(&b, "w%d_%d ", i, rng.IntN(100000))
			if j%10 == 9 {
				b.WriteByte('\n')
			}
		}
		name := fmt.Sprintf("part%02d.txt", i)
		if err := os.WriteFile(filepath.Join(ws, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, map[string]any{"text": fmt.Sprintf("Reading part %d.", i),
			"tool_calls": []map[string]any{{"name": "read_file", "args": map[string]string{"path": name}}}})
	}
	steps = append(steps, map[string]any{"text": "done"})
	body, _ := json.Marshal(map[string]any{"steps": steps})
	script := writeScript(t, string(body))

	run := func(extra ...string) (float64, []string) {
		t.Helper()
		args := append([]string{"run", "--model", "scripted:" + script, "--workspace", ws, "--max-rounds", "60", "--json", "--events", "--no-store", "--yes", "--max-bytes", "8192"}, extra...)
		stdout, stderr, code := inproc(t, append(args, "read every part")...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var res struct {
			Outcome string `json:"outcome"`
			Usage   struct {
				Input, Cached, Output int
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Outcome != "answered" {
			t.Fatalf("result %v: %s", err, stdout)
		}
		var clears []string
		for _, line := range strings.Split(stderr, "\n") {
			var ev struct {
				Policy string         `json:"policy"`
				Data   map[string]any `json:"data"`
			}
			if json.Unmarshal([]byte(line), &ev) == nil && ev.Policy == "compact" && ev.Data["stage"] == "clear-old" {
				clears = append(clears, line)
			}
		}
		u := res.Usage
		return float64(u.Input-u.Cached) + 0.1*float64(u.Cached) + 4*float64(u.Output), clears
	}
	with, clears := run()
	without, none := run("--clear-old", "0")
	if len(clears) == 0 || len(none) != 0 {
		t.Fatalf("clear-old events: %d by default, %d with --clear-old 0", len(clears), len(none))
	}
	if with >= without {
		t.Fatalf("effective tokens %.0f clearing for cost, %.0f without", with, without)
	}
	t.Logf("%d clear(s); effective tokens %.0f vs %.0f without (%.3f×)", len(clears), with, without, with/without)
}
