package benchcore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/cputime"
	"github.com/agentharness/harness/replay"
)

// longRun is a synthetic one-turn coding run of n rounds shaped like the
// recorded mini-swe-agent runs: each round a few sentences of thought and
// one bash call, each result unique lines of listing, grep or source
// output, most a few hundred characters, every seventh a few thousand and
// every fiftieth a 12,000-character file (mean about 800, as recorded).
func longRun(n int) *replay.Recording {
	bash := harness.ToolSpec{Name: "bash", Description: "Execute a bash command",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)}
	rec := &replay.Recording{ID: fmt.Sprintf("long-%d", n), Source: "synthetic", Format: "mini-swe-agent",
		System: "You are a helpful assistant that can interact with a computer shell to solve programming tasks.",
		Tools:  []harness.ToolSpec{bash}}
	turn := &replay.Turn{Input: "<pr_description>Fix the failing parser on nested templates.</pr_description>"}
	for r := 1; r <= n; r++ {
		id := fmt.Sprintf("call_%d", r)
		cmd := fmt.Sprintf("grep -rn 'def parse_%d' src/ | head -40", r)
		args, _ := json.Marshal(map[string]string{"command": cmd})
		call := &replay.Call{
			Assistant: harness.Message{Role: harness.RoleAssistant,
				Parts:     []harness.Part{harness.TextPart(fmt.Sprintf("Round %d: the parser fails on nested templates; let me look at parse_%d and the callers in src/ to see where the depth is lost.", r, r))},
				ToolCalls: []harness.ToolCall{{ID: id, Name: "bash", Args: args}}},
			Usage: harness.Usage{Input: 1000 * r, Output: 80}, HasUsage: true,
		}
		size := 300
		switch {
		case r%50 == 0:
			size = 12_000
		case r%7 == 0:
			size = 3_000
		}
		var b strings.Builder
		b.WriteString("<returncode>0</returncode>\n<output>\n")
		for l := 0; b.Len() < size; l++ {
			fmt.Fprintf(&b, "src/templates/parser_%d.py:%d:    def parse_%d_%d(self, node, depth=%d):\n", r, 10+l, r, l, l%5)
		}
		b.WriteString("</output>")
		call.Results = []*replay.Result{{CallID: id, Tool: "bash", Full: []harness.Part{harness.TextPart(b.String())}, Shown: b.String()}}
		turn.Calls = append(turn.Calls, call)
	}
	rec.Turns = []*replay.Turn{turn}
	return rec
}

// BenchmarkReplay1000Rounds replays one synthetic conversation of 100 and
// of 1,000 rounds under the harness preset, as the bench does (without the
// per-request lists, replay.Options.NoShown), and reports the cost of one
// round: wall time (ns/round) and the process's CPU time (cpu-ns/round,
// what the round costs whatever else the machine runs). Incremental view
// building, token counting and policies keep it near flat in history
// length.
func BenchmarkReplay1000Rounds(b *testing.B) {
	p, err := Lookup("harness")
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{100, 1000} {
		rec := longRun(n)
		needles := replay.Needles(rec)
		b.Run(fmt.Sprintf("rounds=%d", n), func(b *testing.B) {
			cpu := cputime.Process()
			for b.Loop() {
				if _, err := replay.Replay(context.Background(), rec, p.Policy(), &replay.Options{Needles: needles, NoShown: true}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/round")
			b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N)/float64(n), "cpu-ns/round")
		})
	}
}
