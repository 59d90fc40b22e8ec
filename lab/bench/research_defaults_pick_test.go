package benchlab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fig is a setFigures with the same removed share under openai and
// anthropic prices.
func fig(set, variant string, removed, visible float64, above int) setFigures {
	return setFigures{Set: set, Variant: variant, Runs: 2, Ratios: map[string]float64{"openai": 1 - removed/2, "anthropic": 1 - removed/2},
		Removed: map[string]float64{"openai": removed, "anthropic": removed}, Visible: visible, Above: above, Worst: 1}
}

func TestLeaveOneSetOutPick(t *testing.T) {
	var all []setFigures
	for _, s := range []string{"a", "b", "c"} {
		all = append(all, fig(s, "default", 0.20, 0.99, 0))
	}
	all = append(all,
		// tight removes more everywhere but shows too little on c.
		fig("a", "tight", 0.30, 0.98, 0), fig("b", "tight", 0.28, 0.97, 0), fig("c", "tight", 0.35, 0.90, 0),
		// risky removes most but makes a run on b cost more than 1.01 × none.
		fig("a", "risky", 0.40, 0.99, 0), fig("b", "risky", 0.40, 0.99, 1), fig("c", "risky", 0.40, 0.99, 0),
		// same ties the default everywhere.
		fig("a", "same", 0.20, 0.99, 0), fig("b", "same", 0.20, 0.99, 0), fig("c", "same", 0.20, 0.99, 0),
		// loose shows more on a for less removed, and less everywhere else.
		fig("a", "loose", 0.10, 1, 0), fig("b", "loose", 0.10, 0.99, 0), fig("c", "loose", 0.15, 0.98, 0))
	bySet := map[string]map[string]setFigures{}
	for _, f := range all {
		if bySet[f.Set] == nil {
			bySet[f.Set] = map[string]setFigures{}
		}
		bySet[f.Set][f.Variant] = f
	}
	sets, variants := []string{"a", "b", "c"}, []string{"same", "tight", "risky", "default"}
	for _, tc := range []struct {
		held, want string
		gain       float64
	}{
		{"a", "default", 0},  // tight fails c, risky fails b
		{"b", "risky", 0.20}, // without b risky is admissible and gains most
		{"c", "tight", 0.08}, // without c tight is admissible; risky fails b
	} {
		got, gain := pick(bySet, sets, variants, tc.held, "default")
		if got != tc.want || gain < tc.gain-1e-9 || gain > tc.gain+1e-9 {
			t.Errorf("held out %s: pick %s (gain %.3f), want %s (%.3f)", tc.held, got, gain, tc.want, tc.gain)
		}
	}
	out := leaveOneSetOut(all, "default")
	for _, want := range []string{
		"tight         better than default on 2 of 3 sets [a b], the same on [], trades removed for visible on [c], worse on []",
		"risky         better than default on 2 of 3 sets [a c], the same on [], trades removed for visible on [b], worse on []",
		"same          better than default on 0 of 3 sets [], the same on [a b c], trades removed for visible on [], worse on []",
		"loose         better than default on 0 of 3 sets [], the same on [], trades removed for visible on [a], worse on [b c]",
		"| c (2) | tight | +8.0 points | 0.825 / 0.825, 35.0% / 35.0%, 90.0%, 0, 1.000 | 0.900 / 0.900, 20.0% / 20.0%, 99.0%, 0, 1.000 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("leaveOneSetOut lacks %q:\n%s", want, out)
		}
	}
}

func TestSetFiguresFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sweep.jsonl")
	got, err := readSetFigures(path)
	if err != nil || len(got) != 0 {
		t.Fatalf("missing file: %v, %v; want nothing, no error", got, err)
	}
	if err := appendSetFigures(path, []setFigures{fig("a", "default", 0.2, 0.99, 0), fig("a", "8k/off", 0.3, 0.97, 0)}); err != nil {
		t.Fatal(err)
	}
	if err := appendSetFigures(path, []setFigures{fig("a", "8k/off", 0.25, 0.98, 0)}); err != nil {
		t.Fatal(err)
	}
	got, err = readSetFigures(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[[2]string{"a", "8k/off"}].Visible != 0.98 || got[[2]string{"a", "default"}].Removed["openai"] != 0.2 {
		t.Errorf("read back %v; want two pairs, the later 8k/off line", got)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{\"set\":\"a\",\"vari\n") // a line cut short by a killed run
	f.Close()
	if _, err := readSetFigures(path); err == nil || !strings.Contains(err.Error(), "sweep.jsonl:4") {
		t.Errorf("a broken line: error %v, want one naming line 4", err)
	}
}
