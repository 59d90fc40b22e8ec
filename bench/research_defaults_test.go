package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/replay"
)

// defaultsVariant is one candidate for harness's defaults: the result
// ceiling and compaction's cost trigger.
type defaultsVariant struct {
	name      string
	maxBytes  int // result ceiling, bytes
	clearOld  int // CompactPolicy.ClearOld
	keep      int // CompactPolicy.ClearOldKeepRounds
	unbounded bool
	noClear   bool // CompactPolicy.NoClearOld
}

// preset builds the variant as a bench preset.
func (d defaultsVariant) preset() Preset {
	h := defaultHarness()
	if d.maxBytes != 24<<10 {
		h.stack.Ceiling = &guard.ResultPolicy{MaxBytes: d.maxBytes}
	}
	h.clearOld, h.noClearOld, h.clearOldKeep, h.unbounded = d.clearOld, d.noClear, d.keep, d.unbounded
	return Preset{Name: d.name, Doc: "research variant", build: h.build}
}

// defaultsVariants is the grid TestResearchDefaults sweeps; the first is
// harness's defaults.
func defaultsVariants() []defaultsVariant {
	out := []defaultsVariant{{name: "default", maxBytes: 24 << 10, clearOld: 12_000, keep: 8},
		{name: "default-unbounded", maxBytes: 24 << 10, clearOld: 12_000, keep: 8, unbounded: true}}
	for _, kb := range []int{24, 12, 8, 4} {
		out = append(out, defaultsVariant{name: fmt.Sprintf("%dk/off", kb), maxBytes: kb << 10, noClear: true})
		for _, chunk := range []int{6_000, 12_000} {
			for _, keep := range []int{4, 8} {
				name := fmt.Sprintf("%dk/%dk/keep%d", kb, chunk/1000, keep)
				if kb == 24 && chunk == 12_000 && keep == 8 {
					continue // the default
				}
				out = append(out, defaultsVariant{name: name, maxBytes: kb << 10, clearOld: chunk, keep: keep})
			}
		}
	}
	return out
}

// setFigures are one variant's figures on one set of recordings.
type setFigures struct {
	Set     string             `json:"set"`
	Variant string             `json:"variant"`
	Runs    int                `json:"runs"`
	Ratios  map[string]float64 `json:"ratios_to_none"`
	Removed map[string]float64 `json:"removed_share"`
	Visible float64            `json:"visible_share"`
	Above   int                `json:"above_tolerance"`
	Worst   float64            `json:"worst_ratio"`
}

// TestResearchDefaults replays every set of recorded runs named by
// HARNESS_RESEARCH_SETS (comma-separated folders, one set each) under a
// grid of candidate defaults (defaultsVariants: ceiling × cost trigger ×
// kept rounds), with none and floor, and chooses the defaults
// leave-one-set-out: for each set, the variant that is admissible on every
// other set (no run above 1.01 × none, at least 97% visible, or the
// default's visible share where that is lower) and removes the largest
// share of the removable cost on them (the smaller of openai's and
// anthropic's, the worst set first) is checked on the held-out set. It
// prints the figures (and writes them as JSON lines to
// HARNESS_RESEARCH_OUT when set); docs/design.md reports them.
func TestResearchDefaults(t *testing.T) {
	dirs := os.Getenv("HARNESS_RESEARCH_SETS")
	if dirs == "" {
		t.Skip("HARNESS_RESEARCH_SETS is not set")
	}
	vs := defaultsVariants()
	if only := os.Getenv("HARNESS_RESEARCH_VARIANTS"); only != "" {
		keep := strings.Split(only, ",")
		vs = slices.DeleteFunc(vs, func(v defaultsVariant) bool { return !slices.Contains(keep, v.name) })
	}
	floor, _ := Lookup("floor")
	var out *os.File
	if path := os.Getenv("HARNESS_RESEARCH_OUT"); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		out = f
	}
	var all []setFigures
	for _, dir := range strings.Split(dirs, ",") {
		recs, _, err := replay.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		ps := []Preset{floor}
		for _, v := range vs {
			ps = append(ps, v.preset())
		}
		tab, err := Run(context.Background(), recs, &Options{Presets: ps})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range tab.Rows[2:] {
			f := setFigures{Set: filepath.Base(dir), Variant: r.Preset, Runs: len(recs), Ratios: r.Ratios, Removed: r.Removed,
				Visible: r.VisibleShare, Above: r.AboveTolerance, Worst: r.Worst}
			all = append(all, f)
			if out != nil {
				b, _ := json.Marshal(f)
				fmt.Fprintf(out, "%s\n", b)
			}
		}
		recs = nil
	}
	t.Log("\n" + leaveOneSetOut(all))
}

// removedMin is the smaller of the openai and anthropic removed shares.
func removedMin(f setFigures) float64 { return min(f.Removed["openai"], f.Removed["anthropic"]) }

// admissible reports whether f meets the risk and retention bar against
// the default's figures on the same set.
func admissible(f, def setFigures) bool {
	return f.Above == 0 && f.Visible >= min(0.97, def.Visible)-1e-9
}

// leaveOneSetOut chooses a variant for each held-out set on the others
// (see TestResearchDefaults) and reports it against the default there.
func leaveOneSetOut(all []setFigures) string {
	bySet := map[string]map[string]setFigures{}
	var sets, variants []string
	for _, f := range all {
		if bySet[f.Set] == nil {
			bySet[f.Set] = map[string]setFigures{}
			sets = append(sets, f.Set)
		}
		if !slices.Contains(variants, f.Variant) {
			variants = append(variants, f.Variant)
		}
		bySet[f.Set][f.Variant] = f
	}
	var b strings.Builder
	for _, s := range sets {
		for _, v := range variants {
			f := bySet[s][v]
			fmt.Fprintf(&b, "%-30s %-18s %.3f/%.3f × none (openai/anthropic), removed %.1f%%/%.1f%%, visible %.1f%%, > 1.01× %d, worst %.3f\n",
				s, v, f.Ratios["openai"], f.Ratios["anthropic"], 100*f.Removed["openai"], 100*f.Removed["anthropic"], 100*f.Visible, f.Above, f.Worst)
		}
	}
	for _, held := range sets {
		best, bestScore := "", -1e9
		for _, v := range variants {
			score, ok := 1e9, true
			for _, s := range sets {
				if s == held {
					continue
				}
				f, def := bySet[s][v], bySet[s]["default"]
				if !admissible(f, def) {
					ok = false
					break
				}
				score = min(score, removedMin(f)-removedMin(def))
			}
			if ok && score > bestScore {
				best, bestScore = v, score
			}
		}
		if best == "" {
			fmt.Fprintf(&b, "held out %-22s: no variant admissible on every other set\n", held)
			continue
		}
		f, def := bySet[held][best], bySet[held]["default"]
		fmt.Fprintf(&b, "held out %-22s: chose %-18s (trained gain ≥ %+.1f points); held-out removed %.1f%% vs default %.1f%%, visible %.1f%% vs %.1f%%, > 1.01× %d, admissible %v\n",
			held, best, 100*bestScore, 100*removedMin(f), 100*removedMin(def), 100*f.Visible, 100*def.Visible, f.Above, admissible(f, def))
	}
	return b.String()
}
