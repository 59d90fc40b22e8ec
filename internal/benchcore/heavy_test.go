package benchcore

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/replay"
)

// recordingOf builds a one-turn recording whose call i returns one result
// of text[i].
func recordingOf(texts ...string) *replay.Recording {
	rec := &replay.Recording{ID: "synthetic", Turns: []*replay.Turn{{Input: "go"}}}
	for i, s := range texts {
		id := fmt.Sprintf("call_%d", i)
		rec.Turns[0].Calls = append(rec.Turns[0].Calls, &replay.Call{
			Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: id, Name: "bash", Args: json.RawMessage(`{}`)}}},
			Results:   []*replay.Result{{CallID: id, Full: []harness.Part{harness.TextPart(s)}}},
		})
	}
	return rec
}

func TestWeighThresholds(t *testing.T) {
	x := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name    string
		texts   []string
		largest int
		call    string
		share   float64
		heavy   bool
	}{
		{"no results", nil, 0, "", 0, false},
		{"one result just under the size", []string{x(heavyMinChars - 1)}, heavyMinChars - 1, "call_0", 1, false},
		{"one result at the size", []string{x(heavyMinChars)}, heavyMinChars, "call_0", 1, true},
		{"a third exactly", []string{x(heavyMinChars), x(heavyMinChars), x(heavyMinChars)}, heavyMinChars, "call_0", 1.0 / 3, true},
		{"a quarter", []string{x(heavyMinChars), x(heavyMinChars), x(heavyMinChars), x(heavyMinChars)}, heavyMinChars, "call_0", 0.25, false},
		{"large but drowned", []string{x(50_000), x(60_000), x(70_000)}, 70_000, "call_2", 70.0 / 180, true},
		{"large among larger totals", []string{x(20_000), x(30_000), x(40_000), x(50_000)}, 50_000, "call_3", 50.0 / 140, true},
		{"large among many", []string{x(20_000), x(30_000), x(40_000), x(50_000), x(60_000)}, 60_000, "call_4", 60.0 / 200, false},
		// Characters are code points: 10,000 "é" are 20,000 bytes.
		{"code points, not bytes", []string{strings.Repeat("é", heavyMinChars), x(heavyMinChars)}, heavyMinChars, "call_0", 0.5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := Weigh(recordingOf(tc.texts...))
			total := 0
			for _, s := range tc.texts {
				total += utf8.RuneCountInString(s)
			}
			if w.LargestChars != tc.largest || w.LargestCall != tc.call || w.ResultChars != total || w.OutputHeavy != tc.heavy ||
				math.Abs(w.LargestShare-tc.share) > 1e-12 {
				t.Errorf("got %+v, want largest %d (%s) of %d, share %.4f, heavy %v", w, tc.largest, tc.call, total, tc.share, tc.heavy)
			}
			if tc.call != "" && w.LargestTool != "bash" {
				t.Errorf("largest tool %q", w.LargestTool)
			}
		})
	}
}

// TestWeighMatchesAudit checks the hand check the doc promises: the
// largest result is audit's first "largest results" line and the result
// characters are the evidence of the last request under none.
func TestWeighMatchesAudit(t *testing.T) {
	recs, err := Suite()
	if err != nil {
		t.Fatal(err)
	}
	heavy := map[string]bool{"lockfile": true, "spill-paging": true, "build-log-tail": true}
	none, _ := Lookup("none")
	audits, err := auditAll(context.Background(), recs, []Preset{none}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, rec := range recs {
		w, a := Weigh(rec), audits[i]
		last := a.Turns[len(a.Turns)-1]
		if w.OutputHeavy != heavy[rec.ID] {
			t.Errorf("%s: output-heavy %v (share %.3f of %d chars)", rec.ID, w.OutputHeavy, w.LargestShare, w.ResultChars)
		}
		if w.LargestChars != a.Largest[0].Chars || w.LargestCall != a.Largest[0].CallID || w.LargestTool != a.Largest[0].Tool {
			t.Errorf("%s: largest %d %s %s, audit says %+v", rec.ID, w.LargestChars, w.LargestCall, w.LargestTool, a.Largest[0])
		}
		if w.ResultChars != last.PeakEvidenceChars {
			t.Errorf("%s: %d result chars, the last turn's peak request under none shows %d", rec.ID, w.ResultChars, last.PeakEvidenceChars)
		}
	}
}

// suiteTable benches the suite under none, harness, codex and swe-agent
// once for the tests that read the table.
var suiteTable = sync.OnceValues(func() (*Table, error) {
	recs, err := Suite()
	if err != nil {
		return nil, err
	}
	var ps []Preset
	for _, n := range []string{"harness", "codex", "swe-agent"} {
		p, err := Lookup(n)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return Run(context.Background(), recs, &Options{Presets: ps})
})

func TestPerRunFiguresSumToTotals(t *testing.T) {
	tab, err := suiteTable()
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Runs) != 8 || len(tab.Rows) != 4 {
		t.Fatalf("%d runs, %d presets", len(tab.Runs), len(tab.Rows))
	}
	for p, row := range tab.Rows {
		var all, heavy Figures
		above, heavyAbove := 0, 0
		var heavyNone float64
		for _, run := range tab.Runs {
			c := run.Cells[p]
			all.sum(c)
			if c.Effective > run.Cells[0].Effective+1e-9 {
				above++
			}
			if math.Abs(c.Ratio-c.Effective/run.Cells[0].Effective) > 1e-12 {
				t.Errorf("%s on %s: ratio %.6f is not its effective ÷ none's", row.Preset, run.Recording, c.Ratio)
			}
			if run.OutputHeavy {
				heavy.sum(c)
				heavyNone += run.Cells[0].Effective
				if c.Effective > run.Cells[0].Effective+1e-9 {
					heavyAbove++
				}
			}
		}
		// Σ per-run = the total, for every measured figure.
		if math.Abs(all.Effective-row.Effective) > 1e-6 || all.Input != row.Input || all.Cached != row.Cached || all.Output != row.Output ||
			all.Needles != row.Needles || all.Visible != row.Visible || all.Recoverable != row.Recoverable || all.EvidenceChars != row.EvidenceChars ||
			all.ToolSchemas != row.ToolSchemas || all.Calls != row.Calls || above != row.AboveNone {
			t.Errorf("%s: per-run sums %+v (above none %d), total %+v", row.Preset, all, above, row)
		}
		h := tab.OutputHeavy.Rows[p]
		if h.Preset != row.Preset || math.Abs(h.Effective-heavy.Effective) > 1e-6 || math.Abs(h.Ratio-heavy.Effective/heavyNone) > 1e-12 ||
			h.Needles != heavy.Needles || h.Visible != heavy.Visible || h.Recoverable != heavy.Recoverable || h.AboveNone != heavyAbove ||
			math.Abs(h.VisibleShare-float64(heavy.Visible)/float64(heavy.Needles)) > 1e-12 {
			t.Errorf("%s: output-heavy row %+v, per-run sums %+v over none's %.0f", row.Preset, h, heavy, heavyNone)
		}
	}
	if got := strings.Join(tab.OutputHeavy.Recordings, ","); got != "lockfile,spill-paging,build-log-tail" {
		t.Errorf("output-heavy recordings %s", got)
	}
	// A subset of every recording is the summed table itself.
	all := tab.subset(func(*RunRow) bool { return true })
	for p := range tab.Rows {
		if !reflect.DeepEqual(all.Rows[p], tab.Rows[p]) {
			t.Errorf("subset of all %+v, table %+v", all.Rows[p], tab.Rows[p])
		}
	}
	if none := tab.subset(func(*RunRow) bool { return false }); len(none.Rows) != 0 || none.Recordings == nil {
		t.Errorf("empty subset %+v", none)
	}
}

func TestPerRunText(t *testing.T) {
	tab, err := suiteTable()
	if err != nil {
		t.Fatal(err)
	}
	var def, per strings.Builder
	if err := tab.WriteText(&def); err != nil {
		t.Fatal(err)
	}
	if err := tab.WritePerRun(&per); err != nil {
		t.Fatal(err)
	}
	// The default: two header lines, one line per preset, the recordings
	// line and the one output-heavy line.
	lines := strings.Split(strings.TrimRight(def.String(), "\n"), "\n")
	if len(lines) != 2+len(tab.Rows)+1+strings.Count(ColumnNotes, "\n")+1+1 ||
		lines[len(lines)-1] != "output-heavy (largest tool result ≥ 10,000 chars and ≥ 1/3 of all result chars): 3 of 8: lockfile (98.5%), spill-paging (98.7%), build-log-tail (99.0%)" {
		t.Errorf("default output:\n%s", def.String())
	}
	out := per.String()
	for _, want := range []string{"output-heavy 3", "all 8", "largest result", "293,720 of 298,236 = 98.5%"} {
		if !strings.Contains(out, want) {
			t.Errorf("per-run output lacks %q:\n%s", want, out)
		}
	}
	// One line per recording and preset, the recording named on its first.
	for _, run := range tab.Runs {
		for p, c := range run.Cells {
			line := fmt.Sprintf("%s  %s  %s  %.3f", tab.Rows[p].Preset, Kind(tab.Rows[p].Preset), thousands(int(math.Round(c.Effective))), c.Ratio)
			if !containsSquashed(out, line) {
				t.Errorf("no line %q for %s", line, run.Recording)
			}
		}
		flag := "no"
		if run.OutputHeavy {
			flag = "yes"
		}
		if !containsSquashed(out, fmt.Sprintf("%s  %s of %s = %.1f%%  %s  none", run.Recording, thousands(run.LargestChars), thousands(run.ResultChars), 100*run.LargestShare, flag)) {
			t.Errorf("no first line for %s:\n%s", run.Recording, out)
		}
	}
	b, err := json.Marshal(tab)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Runs []struct {
			Recording string  `json:"recording"`
			Heavy     bool    `json:"output_heavy"`
			Share     float64 `json:"largest_share"`
			Largest   int     `json:"largest_result_chars"`
			Cells     []Figures
		} `json:"runs"`
		OutputHeavy Subset `json:"output_heavy"`
	}
	if err := json.Unmarshal(b, &back); err != nil || len(back.Runs) != 8 || !back.Runs[0].Heavy || back.Runs[1].Heavy ||
		back.Runs[0].Largest != 293720 || len(back.OutputHeavy.Rows) != len(tab.Rows) || len(back.Runs[0].Cells) != len(tab.Rows) {
		t.Errorf("json: %v %.400s", err, b)
	}
}

// containsSquashed reports whether s has want once runs of spaces in both
// are squashed to two (tabwriter pads columns).
func containsSquashed(s, want string) bool {
	sq := func(x string) string {
		var lines []string
		for _, l := range strings.Split(x, "\n") {
			lines = append(lines, strings.Join(strings.Fields(l), "  "))
		}
		return strings.Join(lines, "\n")
	}
	return strings.Contains(sq(s), sq(want))
}
