package benchcore

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestKindLabelsEveryPreset(t *testing.T) {
	for name, want := range map[string]string{
		"none": kindBaseline, "harness": kindOurs, "harness-proxy": kindOurs, "floor": kindBound, "oracle": kindBound, "codex": kindOther, "harness-rs": kindOther,
		"claude-code": kindOther, "harness-no-compact": KindAblation, "harness-no-relevance": KindAblation,
		"harness+dedupe": KindIdea, "harness@8k": KindIdea, "harness+settle/runs": KindIdea,
	} {
		if got := Kind(name); got != want {
			t.Errorf("Kind(%q) = %q, want %q", name, got, want)
		}
	}
	for _, p := range append(Presets(), References()...) {
		if Kind(p.Name) == kindOther && p.Ablation {
			t.Errorf("%s is an ablation labelled as another system", p.Name)
		}
		if strings.HasPrefix(p.Name, "harness-") && p.Name != "harness-rs" && p.Name != "harness-proxy" && !strings.HasPrefix(p.Name, "harness-no-") {
			t.Errorf("%s: an ablation's name must say what it lacks (harness-no-…)", p.Name)
		}
	}
}

// The former names of ablations still find them.
func TestFormerNamesAreAliases(t *testing.T) {
	for old, cur := range map[string]string{"harness-compact": "harness-no-compact", "harness-clearold": "harness-no-clearold", "harness-ceiling": "harness-no-ceiling"} {
		p, err := Lookup(old)
		if err != nil || p.Name != cur {
			t.Errorf("Lookup(%q) = %q, %v; want %q", old, p.Name, err, cur)
		}
	}
}

// The page highlights a policy one could adopt, never an ablation or an
// idea, and its cumulative chart plots cost; the JSON carries no float
// noise.
func TestAuditPageHighlightsOnlyPolicies(t *testing.T) {
	recs, err := Suite()
	if err != nil {
		t.Fatal(err)
	}
	var ps []Preset
	for _, n := range []string{"harness", "harness-no-collapse", "harness+finaltools", "codex"} {
		p, err := Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	audits, err := auditAll(context.Background(), recs[:3], ps, nil)
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := WriteAuditHTML(&page, audits); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	for _, name := range []string{"harness-no-collapse", "harness+finaltools"} {
		if strings.Contains(html, "<tr class=\"best\"><td class=\"l\">"+name+"<") {
			t.Errorf("%s is highlighted as the one to pick", name)
		}
	}
	if !strings.Contains(html, "Cumulative cost per preset (effective tokens") || strings.Contains(html, "Cumulative input tokens") {
		t.Error("the cumulative chart does not plot cost")
	}
	for _, a := range audits {
		if len(a.CumulativeCost) != len(a.Presets) {
			t.Fatalf("%s: %d cost series for %d presets", a.Recording, len(a.CumulativeCost), len(a.Presets))
		}
		for k, c := range a.Costs {
			if cum := a.CumulativeCost[k]; len(cum) > 0 && abs(float64(cum[len(cum)-1])-c.Effective) > 1 {
				t.Errorf("%s/%s: the chart ends at %d, the table says %.1f", a.Recording, a.Presets[k], cum[len(cum)-1], c.Effective)
			}
		}
		for _, r := range append(a.ExactRepeats, a.OverlappingReads...) {
			if r.Call <= r.OfCall || r.OfCall < 1 {
				t.Errorf("%s: repeat %+v lacks its model-call numbers", a.Recording, r)
			}
		}
	}
	b, _ := json.Marshal(audits)
	if strings.Contains(string(b), "99999999") || strings.Contains(string(b), "00000001,") {
		t.Errorf("float noise in the JSON")
	}
}

func abs(v float64) float64 { return max(v, -v) }
