package benchlab

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentharness/harness/internal/benchcore"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/replay"
)

// defaultsVariant is one candidate for harness's defaults: the result
// ceiling, and compaction's cost trigger at its default (12,000 tokens,
// newest 8 rounds kept) or off. Every variant keeps the savings bank.
type defaultsVariant struct {
	name       string
	maxBytes   int  // result ceiling, bytes
	noClearOld bool // the cost trigger off: compaction clears only near the window
	// fill, when not all zero, makes an oversized result's preview fill
	// the ceiling instead of the default 4 KiB: guard.Relevant's head,
	// matching lines and tail in these eighths of it (3:3:2 is Relevant's
	// own split; 2:2:4 gives the tail half, as Codex's cut does).
	fill [3]int
	// preview, when set, is the ceiling's preview instead of fill's
	// (readFill: file reads get more of the ceiling than other results).
	preview guard.Preview
}

// preset builds the variant as a bench preset. It is the one place the
// sweep spells "the cost trigger off".
func (d defaultsVariant) preset() benchcore.Preset {
	h := benchcore.DefaultHarness()
	if d.maxBytes != 24<<10 || d.fill != [3]int{} {
		h.Stack.Ceiling = &guard.ResultPolicy{MaxBytes: d.maxBytes}
	}
	if f := d.fill; f != [3]int{} {
		h.Stack.Ceiling.Preview = guard.Relevant{Head: f[0] * d.maxBytes / 8, Middle: f[1] * d.maxBytes / 8, Tail: f[2] * d.maxBytes / 8}
	}
	if d.noClearOld {
		h.NoClearOld = true
	}
	if d.preview != nil {
		h.Stack.Ceiling = &guard.ResultPolicy{MaxBytes: d.maxBytes, Preview: d.preview}
	}
	return benchcore.Preset{Name: d.name, Doc: "research variant", Build: h.Build}
}

// defaultsVariants is the grid TestResearchDefaults sweeps; the first is
// harness's defaults. It holds the variants an earlier, wider sweep (24 to
// 4 KiB ceilings × trigger off, 6,000 or 12,000 tokens × 4 or 8 rounds
// kept) left able to win: the default trigger with the default ceiling,
// and 16, 12, 10 and 8 KiB ceilings with the trigger off and on (Codex's
// own cap is 10 KB), each with the default 4 KiB preview and with one
// that fills the ceiling ("full"); and 16, 12 and 10 KiB ceilings whose
// preview fills them with the tail half ("tail"), the trigger off; and
// previews that give file reads alone 24, 16 or 8 KiB ("readfill", see
// readFill) under the default and a 16 KiB ceiling.
func defaultsVariants() []defaultsVariant {
	out := []defaultsVariant{{name: "default", maxBytes: 24 << 10}}
	relevant, tail := [3]int{3, 3, 2}, [3]int{2, 2, 4}
	for _, fill := range [][3]int{{}, relevant} {
		for _, kb := range []int{16, 12, 10, 8} {
			name := fmt.Sprintf("%dk", kb)
			if fill != [3]int{} {
				name += "/full"
			}
			out = append(out,
				defaultsVariant{name: name + "/off", maxBytes: kb << 10, noClearOld: true, fill: fill},
				defaultsVariant{name: name + "/12k", maxBytes: kb << 10, fill: fill})
		}
	}
	for _, kb := range []int{16, 12, 10} {
		out = append(out, defaultsVariant{name: fmt.Sprintf("%dk/tail/off", kb), maxBytes: kb << 10, noClearOld: true, fill: tail})
	}
	// File reads previewed in up to 24, 16 or 8 KiB, under the default
	// ceiling and under 16 KiB.
	for _, kb := range []int{24, 16, 8} {
		out = append(out, defaultsVariant{name: fmt.Sprintf("readfill%dk", kb), maxBytes: 24 << 10, preview: readFill{fill: kb << 10}})
		out = append(out, defaultsVariant{name: fmt.Sprintf("readfill%dk/16k", kb), maxBytes: 16 << 10, preview: readFill{fill: kb << 10}})
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
// HARNESS_RESEARCH_SETS (comma-separated folders, one set each) under the
// grid of candidate defaults (defaultsVariants, or the names listed in
// HARNESS_RESEARCH_VARIANTS), with none and floor, and chooses the
// defaults leave-one-set-out (see leaveOneSetOut). Each set's figures are
// appended as JSON lines to HARNESS_RESEARCH_OUT, when set, as soon as the
// set is done; a set whose variants that file already holds is not
// replayed again, so a killed sweep resumes where it stopped, two sweeps
// over different sets can share the file, and a last run naming every set
// only prints the choice. The cache is priced as the bench prices it
// (HARNESS_RESEARCH_CACHE_TTL changes it: see researchCacheOptions; one
// HARNESS_RESEARCH_OUT file per pricing). docs/design.md reports the
// figures.
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
	path := os.Getenv("HARNESS_RESEARCH_OUT")
	done, err := readSetFigures(path)
	if err != nil {
		t.Fatal(err)
	}
	var all []setFigures
	for _, dir := range strings.Split(dirs, ",") {
		set := filepath.Base(dir)
		var todo []defaultsVariant
		for _, v := range vs {
			if f, ok := done[[2]string{set, v.name}]; ok {
				all = append(all, f)
			} else {
				todo = append(todo, v)
			}
		}
		if len(todo) == 0 {
			t.Logf("%s: all %d variants in %s, not replayed", set, len(vs), path)
			continue
		}
		start := time.Now()
		figs, err := sweepSet(dir, todo)
		if err != nil {
			t.Fatal(err)
		}
		if err := appendSetFigures(path, figs); err != nil {
			t.Fatal(err)
		}
		all = append(all, figs...)
		t.Logf("%s: %d variants on %d runs in %s", set, len(todo), figs[0].Runs, time.Since(start).Round(time.Second))
	}
	t.Log("\n" + leaveOneSetOut(all, vs[0].name))
}

// sweepSet replays the recordings in dir under floor and vs.
func sweepSet(dir string, vs []defaultsVariant) ([]setFigures, error) {
	recs, _, err := replay.Load(dir)
	if err != nil {
		return nil, err
	}
	floor, _ := benchcore.Lookup("floor")
	ps := []benchcore.Preset{floor}
	for _, v := range vs {
		ps = append(ps, v.preset())
	}
	o, err := researchCacheOptions()
	if err != nil {
		return nil, err
	}
	o.Presets = ps
	tab, err := benchcore.Run(context.Background(), recs, &o)
	if err != nil {
		return nil, err
	}
	var out []setFigures
	for _, r := range tab.Rows[2:] { // none, floor, then the variants
		out = append(out, setFigures{Set: filepath.Base(dir), Variant: r.Preset, Runs: len(recs), Ratios: r.Ratios,
			Removed: r.Removed, Visible: r.VisibleShare, Above: r.AboveTolerance, Worst: r.Worst})
	}
	return out, nil
}

// readSetFigures reads the JSON lines at path ("" or a missing file: none)
// by (set, variant); a later line for the same pair wins.
func readSetFigures(path string) (map[[2]string]setFigures, error) {
	out := map[[2]string]setFigures{}
	if path == "" {
		return out, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		var s setFigures
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out[[2]string{s.Set, s.Variant}] = s
	}
	return out, sc.Err()
}

// appendSetFigures appends figs to path as JSON lines in one write, so two
// sweeps appending to the same file do not interleave a line.
func appendSetFigures(path string, figs []setFigures) error {
	if path == "" {
		return nil
	}
	var b []byte
	for _, f := range figs {
		line, err := json.Marshal(f)
		if err != nil {
			return err
		}
		b = append(append(b, line...), '\n')
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Classes of a variant against the default on one set (compare).
const (
	classBetter = iota // better: admissible, removes more under both prices
	classSame          // the same figures
	classTrades        // removes more but shows less or is riskier, or the reverse
	classWorse         // removes no more and shows no more
)

// compare classes f against the default def on their set.
func compare(f, def setFigures) int {
	const eps = 1e-9
	more := f.Removed["openai"] > def.Removed["openai"]+eps || f.Removed["anthropic"] > def.Removed["anthropic"]+eps
	switch {
	case better(f, def):
		return classBetter
	case f.Above == def.Above && math.Abs(f.Visible-def.Visible) < eps &&
		math.Abs(f.Removed["openai"]-def.Removed["openai"]) < eps && math.Abs(f.Removed["anthropic"]-def.Removed["anthropic"]) < eps:
		return classSame
	case more || f.Visible > def.Visible+eps:
		return classTrades
	}
	return classWorse
}

// removedMin is the smaller of the openai and anthropic removed shares.
func removedMin(f setFigures) float64 { return min(f.Removed["openai"], f.Removed["anthropic"]) }

// admissible reports whether f meets the risk and retention bar against
// the default's figures on the same set.
func admissible(f, def setFigures) bool {
	return f.Above == 0 && f.Visible >= min(0.97, def.Visible)-1e-9
}

// better reports whether f is better than the default def on their set:
// admissible there, and removing more of the removable cost under both
// openai and anthropic prices.
func better(f, def setFigures) bool {
	return admissible(f, def) && f.Removed["openai"] > def.Removed["openai"]+1e-9 &&
		f.Removed["anthropic"] > def.Removed["anthropic"]+1e-9
}

// leaveOneSetOut chooses a variant for each held-out set on the others and
// reports it against the default (named def) there: the variant that is
// admissible on every other set and removes the most of the removable
// cost beyond the default there (the smaller of openai's and anthropic's
// shares, on the set where it gains least). It then lists, per variant,
// the sets on which it is better than the default; a default changes only
// for a variant better on every set.
func leaveOneSetOut(all []setFigures, def string) string {
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
			fmt.Fprintf(&b, "%-30s %-13s %s\n", s, v, figuresCell(bySet[s][v]))
		}
	}
	b.WriteString("\n| held out (runs) | pick | gain on the others | pick: × none openai / anthropic, removed, visible, > 1.01×, worst | default: the same |\n|---|---|---|---|---|\n")
	for _, held := range sets {
		best, gain := pick(bySet, sets, variants, held, def)
		d := bySet[held][def]
		if best == "" {
			fmt.Fprintf(&b, "| %s (%d) | none admissible | | | %s |\n", held, d.Runs, figuresCell(d))
			continue
		}
		fmt.Fprintf(&b, "| %s (%d) | %s | %+.1f points | %s | %s |\n", held, d.Runs, best, 100*gain, figuresCell(bySet[held][best]), figuresCell(d))
	}
	b.WriteString("\n")
	for _, v := range variants {
		if v == def {
			continue
		}
		var by [4][]string // by class
		for _, s := range sets {
			c := compare(bySet[s][v], bySet[s][def])
			by[c] = append(by[c], s)
		}
		fmt.Fprintf(&b, "%-13s better than %s on %d of %d sets %v, the same on %v, trades removed for visible on %v, worse on %v\n",
			v, def, len(by[classBetter]), len(sets), by[classBetter], by[classSame], by[classTrades], by[classWorse])
	}
	return b.String()
}

// pick is the variant admissible on every set but held that gains most
// over def there (removedMin, on the set it gains least), and that gain;
// "" when none is admissible. The default itself gains 0, and wins ties.
func pick(bySet map[string]map[string]setFigures, sets, variants []string, held, def string) (string, float64) {
	best, bestGain := "", -1e9
	for _, v := range variants {
		gain, ok := 1e9, true
		for _, s := range sets {
			if s == held {
				continue
			}
			f, d := bySet[s][v], bySet[s][def]
			if !admissible(f, d) {
				ok = false
				break
			}
			gain = min(gain, removedMin(f)-removedMin(d))
		}
		if ok && (gain > bestGain+1e-9 || v == def && gain >= bestGain-1e-9) {
			best, bestGain = v, gain
		}
	}
	return best, bestGain
}

// figuresCell is one variant's figures on one set, as the table prints
// them.
func figuresCell(f setFigures) string {
	return fmt.Sprintf("%.3f / %.3f, %.1f%% / %.1f%%, %.1f%%, %d, %.3f", f.Ratios["openai"], f.Ratios["anthropic"],
		100*f.Removed["openai"], 100*f.Removed["anthropic"], 100*f.Visible, f.Above, f.Worst)
}
