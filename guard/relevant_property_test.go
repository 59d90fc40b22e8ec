package guard

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

// relRender renders the model copy of data the way the guard does for a
// result held in memory, with a Relevant preview and a query made of
// query (as the call's arguments and the agent's previous message).
func relRender(data []byte, query string, limit int, mode cutMode) string {
	g := newResultGuard(&ResultPolicy{Preview: Relevant{}})
	m := cutMarker{mode: mode, tool: strings.Repeat("T", 64), size: int64(len(data)), limit: limit,
		path:   ".harness/spill/" + strings.Repeat("c", 48) + "/" + strings.Repeat("i", 48) + "-" + strings.Repeat("t", 40) + ".json",
		hint:   "Read it with read_file on that path (offset and limit count lines) or search it with grep on that path.",
		reason: "saving it failed: " + strings.Repeat("e", 150), images: 3}
	args, _ := json.Marshal(map[string]string{"q": query})
	ctx := relContext("", query, query)
	return g.renderPreview(ctx, &harness.ToolCall{ID: "call_1", Name: "tool", Args: args}, previewSourceOf(data), true, m, limit, mode != modeSpilled)
}

// relAdversarial adds the inputs of the brief to the ceiling's adversarial
// set: many short lines that all match, lines that match among noise.
func relAdversarial(n int, rng *rand.Rand) map[string][]byte {
	in := rpAdversarial(n, rng)
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		b.WriteString("x\n")
	}
	in["short matching lines"] = b.Bytes()
	var c bytes.Buffer
	for i := 0; c.Len() < n; i++ {
		if rng.IntN(7) == 0 {
			c.WriteString("needle \xff日本語 needle_x\n")
		} else {
			c.WriteString("hay hay hay hay\n")
		}
	}
	in["needles among hay"] = c.Bytes()
	return in
}

// TestRelevantBoundSweep proves the ceiling for the relevant preview from
// 256 bytes to 1 MiB, in every mode, on adversarial input with queries
// that match it (FuzzRelevantPreview tries any other ceiling).
func TestRelevantBoundSweep(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	// Every ceiling to 1 KiB (where the short marker takes over from the
	// minimal one), every 5th to 4 KiB (where the full one takes over),
	// then a log-spread sample: the whole sweep stays a few seconds
	// under -race.
	limits := []int{}
	for m := minMaxBytes; m <= 4096; m++ {
		if m <= 1024 || m%5 == 0 {
			limits = append(limits, m)
		}
	}
	for range 30 {
		limits = append(limits, int(4096*pow2(rng.Float64()*8)))
	}
	limits = append(limits, 1<<20)
	queries := []string{"x needle 日本語", "", "hay"}
	var names []string
	for i, limit := range limits {
		// Just over the ceiling: the cut is as hard, the sweep quicker.
		inputs := relAdversarial(limit+limit/4+64, rand.New(rand.NewPCG(uint64(i), 8)))
		if names == nil {
			names = slices.Sorted(maps.Keys(inputs))
		}
		name := names[i%len(names)]
		data := inputs[name]
		if limit > 4096 {
			data = bytes.Repeat([]byte("needle \xff日\xe6\x97\nhay 𝄞\n"), limit/12+2)
		}
		q := queries[i%len(queries)]
		// One mode per ceiling, in turn; every mode on the larger ones.
		modes := []cutMode{[]cutMode{modeSpilled, modeTruncated, modePage}[i%3]}
		if limit > 4096 && limit <= 64<<10 {
			modes = []cutMode{modeSpilled, modeTruncated, modePage}
		}
		for _, mode := range modes {
			out := relRender(data, q, limit, mode)
			rpCheckCopy(t, name, out, limit)
		}
	}
}

// FuzzRelevantPreview checks the relevant preview on any text, query and
// ceiling: the model copy fits the ceiling, is valid UTF-8, carries a
// marker, and every line it shows is text of the output, in order.
func FuzzRelevantPreview(f *testing.F) {
	var short bytes.Buffer
	for i := range 10_000 {
		if i%997 == 0 {
			short.WriteString("needle\n")
		} else {
			short.WriteString("ab\n")
		}
	}
	lock := lockLinesForFuzz(400)
	f.Add([]byte("a\xff\xfeb\nzod\n\xe6\x97c\n"+strings.Repeat("\xc3\n", 3000)), "zod", uint32(300), false) // invalid UTF-8
	f.Add([]byte(strings.Repeat("x", 100_000)), "x", uint32(4096), false)                                   // a huge single line
	f.Add([]byte(strings.Repeat("no newline at all ", 2000)), "newline", uint32(1000), true)                // no line breaks
	f.Add([]byte(lock), "", uint32(24<<10), false)                                                          // empty query
	f.Add(short.Bytes(), "needle", uint32(2048), false)                                                     // 10,000 short lines
	f.Add(short.Bytes(), "needle ab", uint32(8192), true)
	f.Add([]byte(lock), "zod version", uint32(4096), false)
	f.Add([]byte("\n\n\n"+strings.Repeat("日本語 needle\n", 500)), "needle", uint32(256), false)
	f.Fuzz(func(t *testing.T, data []byte, query string, l uint32, fill bool) {
		limit := minMaxBytes + int(l%uint32(64<<10))
		if len(data) <= limit {
			data = bytes.Repeat(append(data, '\n'), limit/(len(data)+1)+2)
		}
		mode := modeSpilled
		if fill {
			mode = modeTruncated
		}
		out := relRender(data, query, limit, mode)
		if bytes.Contains(data, []byte("[harness")) || bytes.Contains(data, []byte("… (")) || bytes.Contains(data, []byte("[cut ")) {
			rpCheckCopy(t, "fuzz", out, limit) // the text imitates a marker: check the bounds only
			return
		}
		relCheckShown(t, out, string(data), limit)
	})
}

// lockLinesForFuzz is a lock file of n packages, one of them zod.
func lockLinesForFuzz(n int) string {
	var b strings.Builder
	for i := range n {
		name := "pkg" + fmtInt(int64(i))
		if i == n/2 {
			name = "zod"
		}
		b.WriteString(`  "node_modules/` + name + `": {"version": "1.` + fmtInt(int64(i)) + `.0"},` + "\n")
	}
	return b.String()
}

// hostilePreview proposes whatever it is given: the guard must keep the
// ceiling anyway.
type hostilePreview struct {
	spans []Span
	size  int
	why   string
	ok    bool
}

func (h hostilePreview) Split(w Window, budget int) (int, int) { return HeadTail{}.Split(w, budget) }
func (h hostilePreview) Excerpt(context.Context, *harness.ToolCall, Window, int) (Excerpt, bool) {
	return Excerpt{Spans: h.spans, Size: h.size, Why: h.why}, h.ok
}

// TestExcerptGuardHoldsForAnyProposal feeds the guard spans that overlap,
// run backwards, lie outside the text, cut runes in half, and reasons and
// a why that are long and invalid UTF-8.
func TestExcerptGuardHoldsForAnyProposal(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	inputs := relAdversarial(20_000, rng)
	for _, name := range slices.Sorted(maps.Keys(inputs)) {
		data := inputs[name]
		for _, limit := range []int{256, 300, 700, 1000, 2500, 4096, 9000} {
			for trial := range 10 {
				var spans []Span
				for range rng.IntN(40) {
					s := rng.IntN(len(data)+200) - 100
					spans = append(spans, Span{Start: s, End: s + rng.IntN(3000) - 500,
						Reasons: []string{strings.Repeat("\xffr", rng.IntN(60)), "ok"}})
				}
				hp := hostilePreview{spans: spans, size: rng.IntN(2*limit) - limit/2, why: strings.Repeat("w\xfe", rng.IntN(200)), ok: trial%7 != 0}
				g := newResultGuard(&ResultPolicy{Preview: hp})
				m := cutMarker{mode: cutMode(trial % 4), tool: "tool", size: int64(len(data)), limit: limit, path: ".harness/spill/c/x.txt", hint: "Read it.", reason: "no"}
				out := g.renderPreview(context.Background(), &harness.ToolCall{Name: "tool"}, previewSourceOf(data), true, m, limit, trial%2 == 0)
				relCheckShown(t, out, string(data), limit)
			}
		}
	}
}

// TestExcerptPlanCostIsExact checks the plan's accounting against the
// rendering it stands for, on random proposals.
func TestExcerptPlanCostIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for name, data := range relAdversarial(5000, rng) {
		for range 50 {
			p := newExcerptPlan(data, 1<<30)
			for range rng.IntN(30) + 1 {
				s := rng.IntN(len(data))
				p.add(s, s+rng.IntN(400), nil)
			}
			var b strings.Builder
			prevEnd, after := -1, false
			for _, s := range p.spans {
				writeGap(&b, p, prevEnd, s.start, after)
				b.WriteString(sanitized(data[s.start:s.end]))
				prevEnd, after = s.end, true
			}
			writeGap(&b, p, prevEnd, len(data), after)
			if b.Len() != p.cost {
				t.Fatalf("%s: plan cost %d, rendering %d bytes", name, p.cost, b.Len())
			}
		}
	}
}
