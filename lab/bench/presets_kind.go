package benchlab

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/internal/benchcore"
	"github.com/agentharness/harness/internal/replayengine"
)

// kindRule is a ceiling by what a result holds and by how many results
// the conversation has spilled so far: agents quote the files they print
// or read in their edits, and rarely quote a search's hits, a listing or
// a diff, so those may be cut lower; and a conversation that has spilled
// lowerAfter results is one whose results run large, so its later ones
// may be cut lower too. It reads only the past: the call's tool and
// arguments and the cuts before it.
type kindRule struct {
	// other is the ceiling of results that are not file prints or reads
	// (toolKind "search", "sh:search", "sh:git"); 0: the default.
	other int
	// lowered, when > 0, lowers every ceiling to lowered (when lower)
	// once the conversation has spilled lowerAfter results (0: from its
	// first result).
	lowerAfter, lowered int
	// quotedOnly lowers only the results agents quote ("read", "sh:file")
	// after lowerAfter spills; the others keep other (or the default).
	quotedOnly bool
	// shellOnly lowers only a shell's results (toolKind "sh:…") after
	// lowerAfter spills: a file reader's results, the text an agent with
	// such a tool edits, keep their ceiling.
	shellOnly bool
}

// lowKinds are the kinds kindRule.other applies to: results the agent reads
// for what they point at, not for text it will quote.
var lowKinds = map[string]bool{"search": true, "sh:search": true, "sh:git": true}

// quotedKinds are the kinds agents quote in edits: file prints and reads.
var quotedKinds = map[string]bool{"read": true, "sh:file": true}

// kindPresets are the grid over lowerAfter × the lowered ceiling, the
// ceilings by kind, and their combinations.
func kindPresets() []Preset {
	var out []Preset
	for _, n := range []int{3, 4, 5, 6} {
		for _, k := range []int{10, 12, 16} {
			out = append(out, kindPreset(kindRule{lowerAfter: n, lowered: k << 10}))
		}
	}
	for _, n := range []int{0, 1, 2, 3, 4} {
		for _, k := range []int{10, 12} {
			out = append(out, kindPreset(kindRule{lowerAfter: n, lowered: k << 10, shellOnly: true}))
		}
	}
	for _, k := range []int{4, 6, 8, 10} {
		if k < 10 {
			out = append(out, kindPreset(kindRule{other: k << 10}))
		}
		for _, l := range []kindRule{{lowerAfter: 3, lowered: 10 << 10}, {lowerAfter: 3, lowered: 12 << 10}, {lowerAfter: 4, lowered: 10 << 10},
			{lowerAfter: 2, lowered: 10 << 10, shellOnly: true}, {lowerAfter: 2, lowered: 12 << 10, shellOnly: true},
			{lowerAfter: 3, lowered: 10 << 10, shellOnly: true}, {lowerAfter: 3, lowered: 12 << 10, shellOnly: true}} {
			l.other = k << 10
			out = append(out, kindPreset(l))
		}
	}
	for _, k := range []int{10, 12, 16} {
		out = append(out, kindPreset(kindRule{other: k << 10}))
		for _, n := range []int{4, 6} {
			for _, l := range []int{12, 16} {
				out = append(out, kindPreset(kindRule{other: k << 10, lowerAfter: n, lowered: l << 10}),
					kindPreset(kindRule{other: k << 10, lowerAfter: n, lowered: l << 10, quotedOnly: true}))
			}
		}
	}
	return out
}

// name is the rule's preset name: harness+kind/OTHERk for the ceiling by
// kind, +lowerN/Lk for the lowering (+lowerqN/Lk: quoted kinds only).
func (r kindRule) name() string {
	s := "harness"
	if r.other > 0 {
		s += fmt.Sprintf("+kind/%dk", r.other>>10)
	}
	if r.lowered > 0 {
		q := ""
		switch {
		case r.quotedOnly:
			q = "q"
		case r.shellOnly:
			q = "sh"
		}
		s += fmt.Sprintf("+lower%s%d/%dk", q, r.lowerAfter, r.lowered>>10)
	}
	return s
}

func (r kindRule) doc() string {
	d := "harness"
	if r.other > 0 {
		d += fmt.Sprintf(" whose ceiling is %d KiB for search output, listings and git output (rg, grep, find, ls, git, search and glob tools) and 24 KiB for the rest", r.other>>10)
	}
	if r.lowered > 0 {
		of := "every result"
		switch {
		case r.quotedOnly:
			of = "file prints and reads"
		case r.shellOnly:
			of = "a shell's results"
		}
		d += fmt.Sprintf("; the ceiling of %s falls to %d KiB once the conversation has spilled %d results", of, r.lowered>>10, r.lowerAfter)
	}
	return d
}

func kindPreset(r kindRule) Preset {
	return Preset{Name: r.name(), Doc: r.doc(), Ablation: true, Build: r.build}
}

// ceiling is the ceiling of a call of kind after spills spilled results.
func (r kindRule) ceiling(kind string, spills int64) int {
	c := guard.DefaultMaxBytes
	if r.other > 0 && lowKinds[kind] {
		c = r.other
	}
	if r.lowered > 0 && spills >= int64(r.lowerAfter) && (!r.quotedOnly || quotedKinds[kind]) && (!r.shellOnly || strings.HasPrefix(kind, "sh:")) {
		c = min(c, r.lowered)
	}
	return c
}

// build is harness's defaults with the result ceiling chosen per call by
// ceiling; it counts the conversation's spills (the run ceiling's too).
func (r kindRule) build(env replayengine.Env) (*replayengine.Config, error) {
	h := benchcore.DefaultHarness()
	h.Stack.NoCeiling = true
	cfg, err := h.Build(env)
	if err != nil {
		return nil, err
	}
	var spills atomic.Int64
	g := func(next harness.ToolFunc) harness.ToolFunc {
		byLimit := map[int]harness.ToolFunc{}
		for _, c := range []int{guard.DefaultMaxBytes, r.other, r.lowered} {
			if c > 0 {
				byLimit[c] = (&guard.ResultPolicy{MaxBytes: c}).Guard()(next)
			}
		}
		return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			res, err := byLimit[r.ceiling(toolKind(call.Name, string(call.Args)), spills.Load())](ctx, call)
			if res != nil && len(res.Cuts) > 0 && res.Cuts[len(res.Cuts)-1].Kind == harness.CutSpilled {
				spills.Add(1)
			}
			return res, err
		}
	}
	cfg.Guards = append([]harness.Guard{g}, cfg.Guards...)
	return cfg, nil
}
