package benchcore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/replayengine"
	"github.com/agentharness/harness/replay"
)

// TestCutsOfSplits: a request's saving against none is shared by the
// results it shows cut, by the characters each hides; a round's cost goes
// to the results whose needles it reads back, evenly, and none to a needle
// none hides too.
func TestCutsOfSplits(t *testing.T) {
	type cs = replayengine.CallStat
	type sh = replayengine.Shown
	none := &replayengine.Report{Calls: []cs{
		{Index: 1, Input: 100, Output: 10},
		{Index: 2, Input: 1100, Cached: 100, Output: 10, Shown: []sh{{CallID: "a", Chars: 3000, State: "whole"}, {CallID: "b", Chars: 1000, State: "whole"}}},
		{Index: 3, Input: 1200, Cached: 1100, Output: 10, Shown: []sh{{CallID: "a", Chars: 3000, State: "whole"}, {CallID: "b", Chars: 1000, State: "whole"}}},
	}}
	preset := &replayengine.Report{
		Calls: []cs{
			{Index: 1, Input: 100, Output: 10},
			{Index: 2, Input: 500, Cached: 100, Output: 10, Shown: []sh{{CallID: "a", Chars: 600, State: "spilled"}, {CallID: "b", Chars: 400, State: "trimmed"}}},
			{Index: 0, Input: 500, Cached: 500, Output: 5}, // a reveal round: no counterpart in none
			{Index: 3, Input: 600, Cached: 500, Output: 10, Shown: []sh{{CallID: "a", Chars: 600, State: "spilled"}, {CallID: "b", Chars: 30, State: "cleared"}}},
		},
		Results: []replayengine.ResultStat{
			{CallID: "a", Tool: "Read", Args: `{"file_path":"a.go"}`, FullChars: 3000, ShownChars: 600, State: "spilled"},
			{CallID: "b", Tool: "bash", Args: `{"command":"make"}`, FullChars: 1000, ShownChars: 400, State: "trimmed"},
		},
		Recoveries: []replayengine.Recovery{{At: 3, Output: 20, Added: 200, Needles: []string{"x", "y", "z"}, Sources: []string{"a", "b", "b"}}},
	}
	hidden := map[string]bool{"z": true}
	cuts := cutsOf(preset, none, chargedRounds(preset, hidden), hidden)
	if len(cuts) != 2 || cuts[0].Call != "a" || cuts[1].Call != "b" {
		t.Fatalf("cuts %+v, want a then b", cuts)
	}
	a, b := cuts[0], cuts[1]
	if a.Request != 2 || a.Arrival != "spilled" || a.Cleared != 0 || b.Arrival != "trimmed" || b.Cleared != 3 || a.Tool != "Read" {
		t.Errorf("a %+v\nb %+v", a, b)
	}
	for _, p := range Pricings() {
		// Request 2 hides 2400 of a and 600 of b; request 3 hides 2400 and 970.
		d2 := p.Cost(none.Calls[1]) - p.Cost(preset.Calls[1])
		d3 := p.Cost(none.Calls[2]) - p.Cost(preset.Calls[3])
		wantA := d2*2400/3000 + d3*2400/3370
		wantB := d2*600/3000 + d3*970/3370
		if math.Abs(a.Saved[p.Name]-wantA) > 1e-6 || math.Abs(b.Saved[p.Name]-wantB) > 1e-6 {
			t.Errorf("%s: saved a %.2f b %.2f, want %.2f %.2f", p.Name, a.Saved[p.Name], b.Saved[p.Name], wantA, wantB)
		}
		round := 0.0
		for _, c := range withRecovery(preset.Calls, preset.Recoveries) {
			round += p.Cost(c)
		}
		for _, c := range preset.Calls {
			round -= p.Cost(c)
		}
		if math.Abs(a.RereadCost[p.Name]-round/2) > 1e-6 || math.Abs(b.RereadCost[p.Name]-round/2) > 1e-6 {
			t.Errorf("%s: re-read cost a %.2f b %.2f, want half of %.2f each", p.Name, a.RereadCost[p.Name], b.RereadCost[p.Name], round)
		}
	}
	if a.Rereads != 1 || b.Rereads != 1 {
		t.Errorf("rounds a %d b %d, want 1 each", a.Rereads, b.Rereads)
	}
}

// TestBenchCuts: through Run, a 30 KB file read that harness spills and a
// later call quotes from its middle is one cut whose saving and re-read
// cost are the run's (nothing else is cut), in the JSON and on a line of
// WritePerRun; without Options.Cuts no run lists any.
func TestBenchCuts(t *testing.T) {
	var file strings.Builder
	for i := range 600 {
		if i == 300 {
			file.WriteString("func needleInTheMiddle() {}\n")
			continue
		}
		fmt.Fprintf(&file, "// line %04d of a long source file that nobody quotes again\n", i)
	}
	call := func(id, name, args, out string) *replay.Call {
		return &replay.Call{Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: id, Name: name, Args: json.RawMessage(args)}}},
			Results: []*replay.Result{{CallID: id, Tool: name, Full: []harness.Part{harness.TextPart(out)}}}, Usage: harness.Usage{Output: 20}, HasUsage: true}
	}
	rec := &replay.Recording{ID: "cuts", Format: "builtin", System: "You are a coding agent.", Turns: []*replay.Turn{{Input: "fix it", Calls: []*replay.Call{
		call("read_1", "Read", `{"file_path":"src/big.go"}`, file.String()),
		call("ls_1", "bash", `{"command":"ls"}`, "big.go"),
		call("use_1", "bash", `{"command":"grep -n needleInTheMiddle src/big.go"}`, "301: ok"),
		{Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("done")}}, Final: true},
	}}}}
	ps, err := Lookup("harness")
	if err != nil {
		t.Fatal(err)
	}
	tab, err := Run(context.Background(), []*replay.Recording{rec}, &Options{Presets: []Preset{ps}, Cuts: true})
	if err != nil {
		t.Fatal(err)
	}
	none, h := tab.Runs[0].Cells[0], tab.Runs[0].Cells[1]
	if len(none.Cuts) != 0 || len(h.Cuts) != 1 {
		t.Fatalf("none lists %d cuts, harness %d: want 0 and 1", len(none.Cuts), len(h.Cuts))
	}
	c := h.Cuts[0]
	if c.Call != "read_1" || c.Arrival != "spilled" || c.Rereads != 1 || c.Request != 2 {
		t.Errorf("cut %+v", c)
	}
	for _, p := range Pricings() {
		if saved := none.Costs[p.Name] - h.Costs[p.Name]; math.Abs(c.Saved[p.Name]-saved) > 0.1 {
			t.Errorf("%s: cut saved %.2f, the run %.2f", p.Name, c.Saved[p.Name], saved)
		}
		if reread := h.CostsWithRecovery[p.Name] - h.Costs[p.Name]; reread <= 0 || math.Abs(c.RereadCost[p.Name]-reread) > 0.1 {
			t.Errorf("%s: cut's re-read %.2f, the run's %.2f", p.Name, c.RereadCost[p.Name], reread)
		}
	}
	var out bytes.Buffer
	if err := tab.WritePerRun(&out); err != nil {
		t.Fatal(err)
	}
	line := ""
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, "read_1") {
			line = l
		}
	}
	if !strings.Contains(out.String(), "\ncuts: what hiding each result saved") || !strings.Contains(line, "spilled") ||
		!strings.Contains(line, thousands(c.FullChars)) || !strings.Contains(line, signed(c.Saved["openai"]-c.RereadCost["openai"])) {
		t.Errorf("no line for the cut with its figures in:\n%s", out.String())
	}
	plain, err := Run(context.Background(), []*replay.Recording{rec}, &Options{Presets: []Preset{ps}})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Runs[0].Cells[1].Cuts) != 0 {
		t.Error("cuts listed without Options.Cuts")
	}
}

func TestOneLine(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"a\tb\nc", 10, "a b c"},
		{`{"file_path":"/Users/me/project/docs/style-guide.md"}`, 30, `{"file_pat…cs/style-guide.md"}`},
		{"ééééééééééé", 5, "é…ééé"},
	} {
		if got := oneLine(c.in, c.max); got != c.want || len([]rune(got)) > c.max {
			t.Errorf("oneLine(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}
