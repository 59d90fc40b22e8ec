package benchcore

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentharness/harness/replay"
)

func TestSuiteIsDeterministic(t *testing.T) {
	a, err := Suite()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Suite()
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) || len(a) != 8 {
		t.Fatalf("the suite differs between two generations (%d scenarios)", len(a))
	}
	for _, rec := range a {
		if rec.Calls() == 0 || len(rec.Tools) == 0 {
			t.Errorf("%s: %d calls, %d tools", rec.ID, rec.Calls(), len(rec.Tools))
		}
	}
	if n := len(a[2].Tools); n != 84 {
		t.Errorf("graphql scenario has %d tools", n)
	}
}

func TestPresetsAreNamedAndDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Presets() {
		if p.Doc == "" || seen[p.Name] || p.Build == nil {
			t.Errorf("preset %q: doc %q, duplicate %v", p.Name, p.Doc, seen[p.Name])
		}
		seen[p.Name] = true
		if k := Kind(p.Name); k == KindAblation || k == KindIdea || p.Ablation {
			t.Errorf("preset %q is an experiment (%s): the lab holds those", p.Name, k)
		}
		if _, err := Lookup(p.Name); err != nil {
			t.Error(err)
		}
	}
	for _, want := range []string{"none", "harness", "harness-proxy", "harness-rs", "claude-code", "codex", "swe-agent", "openhands", "crush", "anthropic-context-editing"} {
		if !seen[want] {
			t.Errorf("missing preset %s", want)
		}
	}
	for _, b := range []string{"floor", "oracle"} {
		if f, err := Lookup(b); err != nil || f.Doc == "" || seen[b] || Kind(b) != kindBound {
			t.Errorf("the %s reference: %v (in the default presets: %v, kind %s)", b, err, seen[b], Kind(b))
		}
	}
	if _, err := Lookup("nope"); err == nil {
		t.Error("Lookup of an unknown preset succeeded")
	}
}

// TestBoundsOnSuite checks the two bounds on every scenario: the oracle
// shows every result the agent used where it used it (100% visible) and
// costs between floor (nothing shown) and none (everything shown), under
// every price model; floor hides the evidence.
func TestBoundsOnSuite(t *testing.T) {
	recs, err := Suite()
	if err != nil {
		t.Fatal(err)
	}
	tab, err := Run(context.Background(), recs, &Options{Presets: References()})
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 3 || tab.Rows[1].Preset != "floor" || tab.Rows[2].Preset != "oracle" {
		t.Fatalf("rows %+v", tab.Rows)
	}
	for _, run := range tab.Runs {
		none, floor, oracle := run.Cells[0], run.Cells[1], run.Cells[2]
		if oracle.Visible != oracle.Needles {
			t.Errorf("%s: oracle shows %d of %d needles", run.Recording, oracle.Visible, oracle.Needles)
		}
		if floor.Needles > 0 && floor.Visible == floor.Needles {
			t.Errorf("%s: floor shows every needle", run.Recording)
		}
		for name, c := range oracle.Costs {
			if c < floor.Costs[name]-1e-6 || c > none.Costs[name]+1e-6 {
				t.Errorf("%s under %s: oracle %.1f outside [floor %.1f, none %.1f]", run.Recording, name, c, floor.Costs[name], none.Costs[name])
			}
		}
	}
	if r := tab.Rows[2].Removed["openai"]; r <= 0 || r >= 1 {
		t.Errorf("oracle removes %.3f of the removable cost, want strictly between 0 and 1", r)
	}
}

func TestRunOnSuite(t *testing.T) {
	recs, err := Suite()
	if err != nil {
		t.Fatal(err)
	}
	var ps []Preset
	for _, n := range []string{"harness", "codex", "swe-agent", "harness-no-toolselect"} {
		p, _ := lookupContrast(n)
		ps = append(ps, p)
	}
	tab, err := Run(context.Background(), recs, &Options{Presets: ps})
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 5 || tab.Rows[0].Preset != "none" || tab.Rows[0].Ratio != 1 || tab.Rows[0].VisibleShare != 1 {
		t.Fatalf("rows %+v", tab.Rows)
	}
	cell := func(rec, preset string) Figures {
		for _, run := range tab.Runs {
			if run.Recording == rec {
				for i, r := range tab.Rows {
					if r.Preset == preset {
						return run.Cells[i]
					}
				}
			}
		}
		t.Fatalf("no cell %s/%s", rec, preset)
		return Figures{}
	}
	// The lock file is spilled: most of its cost goes, and the evidence
	// the agent used stays reachable through the spill file.
	if c := cell("lockfile", "harness"); c.Ratio > 0.2 || c.RecoverableShare != 1 {
		t.Errorf("lockfile under harness: %+v", c)
	}
	// Head-only cuts lose the verdict at the end of a build log.
	if h, s := cell("build-log-tail", "harness"), cell("build-log-tail", "swe-agent"); h.VisibleShare != 1 || s.VisibleShare == 1 {
		t.Errorf("build log: harness visible %.2f, swe-agent visible %.2f", h.VisibleShare, s.VisibleShare)
	}
	// 84 tools over nine requests: harness offers the 20 its selection
	// picks, every tool the agent called among them; without selection
	// (and under codex, which sends all) all 84 go on every request.
	sel, all := cell("graphql-84", "harness"), cell("graphql-84", "harness-no-toolselect")
	if sel.ToolSchemas != 20*sel.Calls || sel.Unoffered != 0 || all.ToolSchemas != 84*all.Calls || cell("graphql-84", "codex").ToolSchemas != 84*all.Calls {
		t.Errorf("graphql-84: %d schemas (%d unoffered calls) with selection, %d without", sel.ToolSchemas, sel.Unoffered, all.ToolSchemas)
	}
	if sel.Ratio > 0.5 || all.Ratio < 0.99 || sel.VisibleShare != 1 {
		t.Errorf("graphql-84: %.3f × none with selection, %.3f without, visible %.2f", sel.Ratio, all.Ratio, sel.VisibleShare)
	}
	for _, r := range tab.Rows {
		if r.Visible > r.Recoverable || r.Recoverable > r.Needles || r.Cached > r.Input {
			t.Errorf("%s: inconsistent figures %+v", r.Preset, r.Figures)
		}
	}
	var sb strings.Builder
	if err := tab.WriteText(&sb); err != nil || !strings.Contains(sb.String(), "swe-agent") {
		t.Errorf("text: %v\n%s", err, sb.String())
	}
}

func TestAuditFindsRepeatsAndWritesWellFormedHTML(t *testing.T) {
	recs, err := Suite()
	if err != nil {
		t.Fatal(err)
	}
	var pick []*replay.Recording
	for _, r := range recs {
		if r.ID == "overlapping-reads" || r.ID == "lockfile" {
			pick = append(pick, r)
		}
	}
	h, _ := Lookup("harness")
	audits, err := auditAll(context.Background(), pick, []Preset{h}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ov := audits[1]
	if len(ov.ExactRepeats) != 1 || len(ov.OverlappingReads) != 5 {
		t.Errorf("overlapping-reads: %d exact, %d overlapping", len(ov.ExactRepeats), len(ov.OverlappingReads))
	}
	if lk := audits[0]; lk.Largest[0].Tool != "read_file" || !strings.Contains(lk.Largest[0].Args, "package-lock.json") {
		t.Errorf("largest: %+v", lk.Largest[0])
	}
	if len(ov.Presets) != 2 || len(ov.Cumulative[1]) != ov.Calls {
		t.Errorf("costs: %v %d", ov.Presets, len(ov.Cumulative))
	}
	var sb strings.Builder
	if err := WriteAuditHTML(&sb, audits); err != nil {
		t.Fatal(err)
	}
	checkPage(t, sb.String(), 2)
}

// TestAuditRecordingsTotal checks the report's total against its own
// audits: each preset's summed figures are the sum of what it cost each
// recording, and its text ends with that table and the column notes once.
func TestAuditRecordingsTotal(t *testing.T) {
	recs, err := Suite()
	if err != nil {
		t.Fatal(err)
	}
	h, _ := Lookup("harness")
	cc, _ := Lookup("claude-code")
	r, err := AuditRecordings(context.Background(), recs[:4], &Options{Presets: []Preset{h, cc}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Audits) != 4 || len(r.Total.Runs) != 4 || len(r.Total.Rows) != 3 {
		t.Fatalf("%d audits, total of %d runs and %d rows", len(r.Audits), len(r.Total.Runs), len(r.Total.Rows))
	}
	for p, row := range r.Total.Rows {
		var input, needles, visible int
		for _, a := range r.Audits {
			if a.Presets[p] != row.Preset {
				t.Fatalf("audit %s: preset %d is %s, the total's %s", a.Recording, p, a.Presets[p], row.Preset)
			}
			input += a.Costs[p].Input
			needles += a.Costs[p].Needles
			visible += a.Costs[p].Visible
		}
		if row.Input != input || row.Needles != needles || row.Visible != visible {
			t.Errorf("%s: total input %d, needles %d, visible %d; the audits sum to %d, %d, %d", row.Preset, row.Input, row.Needles, row.Visible, input, needles, visible)
		}
	}
	var sb strings.Builder
	if err := r.WriteText(&sb); err != nil {
		t.Fatal(err)
	}
	out := sb.String()
	total := strings.Index(out, "== in total: 4 recordings")
	if total < 0 || total < strings.LastIndex(out, "== "+r.Audits[3].Recording+" ") {
		t.Fatalf("no total after the last recording's audit:\n%s", out)
	}
	if n := strings.Count(out, ColumnNotes); n != 1 || !strings.HasSuffix(strings.TrimSpace(out[:strings.Index(out, "output-heavy (")]), strings.TrimSpace(ColumnNotes)) {
		t.Errorf("column notes printed %d times, want once under the total", n)
	}
	if !strings.Contains(out[total:], "with re-reads\n") || !strings.Contains(out[total:], "> 1.01×") {
		t.Errorf("the total lacks bench's columns:\n%s", out[total:])
	}
	sb.Reset()
	if err := writeAuditText(&sb, r.Audits); err != nil || strings.Count(sb.String(), ColumnNotes) != 1 || strings.Contains(sb.String(), "== in total") {
		t.Errorf("writeAuditText: %v, notes %d times, total %v", err, strings.Count(sb.String(), ColumnNotes), strings.Contains(sb.String(), "== in total"))
	}
}
