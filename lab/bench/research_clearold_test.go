package benchlab

import (
	"context"
	"fmt"
	"github.com/agentharness/harness/internal/benchcore"
	"os"
	"strings"
	"testing"

	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/replay"
)

// TestResearchClearOld sweeps CompactPolicy's cost trigger — the chunk of
// old results that starts a clear (ClearOld) × the newest rounds it keeps
// (ClearOldKeepRounds) — over recorded runs, printing the cost ratio to
// none and the visible needles per run and in total. It is how the
// defaults (12,000 tokens, 8 rounds) were chosen (docs/design.md). It
// needs recorded runs: HARNESS_RESEARCH_DATA=DIR.
func TestResearchClearOld(t *testing.T) {
	recs := researchRecordings(t)
	c := counter(t)
	none, _ := benchcore.Lookup("none")
	type variant struct {
		name        string
		chunk, keep int
		off         bool // CompactPolicy.NoClearOld
	}
	vs := []variant{{name: "off", off: true}}
	for _, chunk := range []int{6_000, 8_000, 10_000, 12_000, 14_000, 16_000, 18_000} {
		for _, keep := range []int{3, 5, 8, 12} {
			vs = append(vs, variant{name: fmt.Sprintf("%dk/keep%d", chunk/1000, keep), chunk: chunk, keep: keep})
		}
	}
	policy := func(v variant) replay.Policy {
		return replay.Policy{Name: v.name, New: func(env replay.Env) (*replay.Config, error) {
			h := benchcore.DefaultHarness()
			h.Stack.NoCompact = true
			cfg, err := h.Build(env)
			if err != nil {
				return nil, err
			}
			cfg.Policies = append(cfg.Policies, &policy.CompactPolicy{Model: env.Model, Counter: env.Counter, Window: benchcore.ModelWindow(env.Model),
				ClearOld: v.chunk, NoClearOld: v.off, ClearOldKeepRounds: v.keep})
			return cfg, nil
		}}
	}
	type total struct {
		eff, base    float64
		vis, needles int
	}
	sums := make([]total, len(vs))
	var b strings.Builder
	for _, rec := range recs {
		needles := replay.Needles(rec)
		base, err := replay.Replay(context.Background(), rec, none.Policy(), &replay.Options{Counter: c, Needles: needles})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vs {
			rep, err := replay.Replay(context.Background(), rec, policy(v), &replay.Options{Counter: c, Needles: needles})
			if err != nil {
				t.Fatal(err)
			}
			sums[i].eff += rep.Effective
			sums[i].base += base.Effective
			sums[i].vis += rep.Visible
			sums[i].needles += rep.Needles
			fmt.Fprintf(&b, "%-26s %-12s %.3f × none, visible %d/%d\n", rec.ID, v.name, rep.Effective/base.Effective, rep.Visible, rep.Needles)
		}
	}
	for i, v := range vs {
		s := sums[i]
		fmt.Fprintf(&b, "%-26s %-12s %.3f × none, visible %d/%d\n", "all", v.name, s.eff/s.base, s.vis, s.needles)
	}
	t.Log("\n" + b.String())
}

// TestResearchNeedleKinds counts, per recorded run, the needles that are
// one o200k token (a word the model can write without having read the
// result: "import", "whereas") against names (identifiers with an
// underscore, a digit or an inner capital). Retention counts both alike,
// as docs/design.md defines it; the split says how much of a retention figure
// is vocabulary. It needs HARNESS_RESEARCH_DATA=DIR.
func TestResearchNeedleKinds(t *testing.T) {
	recs := researchRecordings(t)
	c := counter(t)
	var b strings.Builder
	for _, rec := range recs {
		one, names, all := 0, 0, 0
		for _, n := range replay.Needles(rec) {
			all++
			if c.Count(" "+n.Text) == 1 {
				one++
			}
			if identifierLike(n.Text) {
				names++
			}
		}
		fmt.Fprintf(&b, "%-26s %3d needles: %3d one token, %3d names\n", rec.ID, all, one, names)
	}
	t.Log("\n" + b.String())
}

// identifierLike reports whether w has an underscore, a digit, or a capital
// after a small letter (camelCase).
func identifierLike(w string) bool {
	lower := false
	for _, r := range w {
		switch {
		case r == '_' || (r >= '0' && r <= '9'):
			return true
		case r >= 'A' && r <= 'Z':
			if lower {
				return true
			}
			lower = false
		default:
			lower = r >= 'a' && r <= 'z'
		}
	}
	return false
}

// researchRecordings loads the recordings named by HARNESS_RESEARCH_DATA,
// or skips the test.
func researchRecordings(t *testing.T) []*replay.Recording {
	t.Helper()
	dir := os.Getenv("HARNESS_RESEARCH_DATA")
	if dir == "" {
		t.Skip("HARNESS_RESEARCH_DATA is not set")
	}
	recs, _, err := replay.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}
