package guard

import (
	"bytes"
	"context"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentharness/harness"
)

// rpAdversarial returns inputs of at least n bytes that stress the
// preview: one endless line, multi-byte runes at every alignment, invalid
// UTF-8, nothing but line breaks, random bytes.
func rpAdversarial(n int, rng *rand.Rand) map[string][]byte {
	rep := func(unit string, skip int) []byte {
		b := bytes.Repeat([]byte(unit), n/len(unit)+2)
		return b[skip:]
	}
	random := make([]byte, n+8)
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	return map[string][]byte{
		"one long line":     rep("x", 0),
		"3-byte runes +1":   rep("日本語", 1),
		"4-byte runes +2":   rep("𝄞😀", 2),
		"invalid utf-8":     rep("\xff\xfe\xe6\x97a\xc3", 0),
		"only line breaks":  rep("\n", 0),
		"short lines, runé": rep("é\n", 1),
		"random bytes":      random,
	}
}

// rpCheckCopy asserts the ceiling's promises on a model copy.
func rpCheckCopy(t testing.TB, what string, text string, limit int) {
	t.Helper()
	if len(text) > limit {
		t.Fatalf("%s: model copy %d bytes > ceiling %d", what, len(text), limit)
	}
	if !utf8.ValidString(text) {
		t.Fatalf("%s: model copy is not valid UTF-8", what)
	}
	if !strings.Contains(text, "[harness") && !strings.Contains(text, "[cut ") {
		t.Fatalf("%s: no marker in %q", what, text)
	}
}

// TestResultCeilingBoundSweep renders the model copy for every ceiling
// from 256 bytes to 4 KiB (where the marker tiers change) and a log-spread
// sample up to 1 MiB, for every mode and adversarial input, with the
// longest tool name and spill path the directory store produces.
func TestResultCeilingBoundSweep(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	limits := []int{}
	for m := minMaxBytes; m <= 4096; m++ {
		limits = append(limits, m)
	}
	for range 40 {
		// log-uniform in (4 KiB, 1 MiB]
		limits = append(limits, int(4096*pow2(rng.Float64()*8)))
	}
	limits = append(limits, 1<<20)
	longPath := ".harness/spill/" + strings.Repeat("c", 48) + "/" + strings.Repeat("i", 48) + "-" + strings.Repeat("t", 40) + ".json"
	inputs := rpAdversarial(2*4096+64, rng)
	inputNames := slices.Sorted(maps.Keys(inputs))
	for _, limit := range limits {
		// Each ceiling gets one input, in turn, so that every input meets
		// every marker tier while the sweep stays quick.
		var in map[string][]byte
		if limit > 4096 {
			in = map[string][]byte{"invalid utf-8": bytes.Repeat([]byte("\xff日\xe6\x97\n𝄞"), 2*limit/10+2)}
		} else {
			k := inputNames[limit%len(inputNames)]
			in = map[string][]byte{k: inputs[k]}
		}
		for name, data := range in {
			for _, mode := range []cutMode{modeSpilled, modeTruncated, modeLost, modePage} {
				m := cutMarker{mode: mode, tool: strings.Repeat("T", 64), size: int64(len(data)), limit: limit,
					path: longPath, hint: "Read it with read_file on that path (offset and limit count lines) or search it with grep on that path.",
					reason: "saving it failed: " + strings.Repeat("e", 150), images: 3, failure: strings.Repeat("f", 120)}
				src := previewSourceOf(data)
				if mode == modeLost {
					// A stream: only its ends are at hand.
					src = previewSource{head: data[:limit+1], tail: data[len(data)-limit:], total: int64(len(data)) * 1000, newlines: 1 << 40}
					m.size = src.total
				}
				out, _ := renderCut(src, m, limit, HeadTail{}, mode != modeSpilled)
				rpCheckCopy(t, name, out, limit)
				if limit >= 1024 && mode == modeSpilled && !strings.Contains(out, longPath) {
					t.Fatalf("limit %d: the spill path is missing", limit)
				}
			}
		}
	}
}

func pow2(x float64) float64 {
	r := 1.0
	for x >= 1 {
		r *= 2
		x--
	}
	// 2^x for x in [0,1) by a short series is plenty for sampling.
	return r * (1 + x*0.6931471805599453 + x*x*0.2402265069591007 + x*x*x*0.0555041086648216)
}

// TestResultPolicyBoundEndToEnd runs the whole guard — real spill
// directory, streams, pages, a failed spill — on adversarial payloads at
// ceilings spread from 256 B to 1 MiB.
func TestResultPolicyBoundEndToEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	limits := []int{256, 257, 300, 511, 777, 1000, 1024, 2047, 4096, 24 << 10, 100_003, 1 << 20}
	for _, limit := range limits {
		n := 2*limit + 100
		if limit > 64<<10 {
			n = limit + limit/2
		}
		for name, data := range rpAdversarial(n, rng) {
			if limit > 64<<10 && name != "invalid utf-8" {
				continue
			}
			rpEndToEnd(t, name, data, limit)
		}
	}
}

// rpEndToEnd checks one payload at one ceiling in every mode.
func rpEndToEnd(t testing.TB, name string, data []byte, limit int) {
	t.Helper()
	ws := t.TempDir()
	p := &ResultPolicy{MaxBytes: limit, StreamKeep: limit + 100}
	modes := []struct {
		mode string
		ws   string
		res  func() *harness.ToolResult
	}{
		{"spill", ws, func() *harness.ToolResult { return harness.TextResult(string(data)) }},
		{"no workspace", "", func() *harness.ToolResult { return harness.TextResult(string(data)) }},
		{"page", ws, func() *harness.ToolResult {
			r := harness.TextResult(string(data))
			r.Meta = map[string]any{"path": ".harness/spill/c/x.txt"}
			return r
		}},
		{"stream spill", ws, func() *harness.ToolResult { r, _ := rpStreamResult(string(data)); return r }},
		{"stream lost", "", func() *harness.ToolResult { r, _ := rpStreamResult(string(data)); return r }},
		{"json parts", ws, func() *harness.ToolResult {
			return &harness.ToolResult{Parts: []harness.Part{harness.TextPart(string(data[:len(data)/2])), harness.TextPart(string(data[len(data)/2:]))}}
		}},
	}
	for _, m := range modes {
		out := rpCall(t, p, rpContext(m.ws, "c", harness.ReadOnly, nil), "tool", "call_1", m.res())
		if len(out.Cuts) != 1 {
			t.Fatalf("%s/%s at %d: cuts %+v", name, m.mode, limit, out.Cuts)
		}
		rpCheckCopy(t, name+"/"+m.mode, rpModelText(out), limit)
		if out.Cuts[0].BytesOut != len(rpModelText(out)) {
			t.Fatalf("%s/%s: cut says %d bytes out, copy has %d", name, m.mode, out.Cuts[0].BytesOut, len(rpModelText(out)))
		}
	}
}

// FuzzResultCeiling proves the marker-inside-ceiling bound on arbitrary
// payloads and ceilings from 256 B to 1 MiB, through the whole guard.
func FuzzResultCeiling(f *testing.F) {
	f.Add([]byte("x"), uint32(0))
	f.Add([]byte("日本語\n"), uint32(1000))
	f.Add([]byte("\xff\xfe\xe6\x97"), uint32(24<<10))
	f.Add([]byte("𝄞"), uint32(1<<20))
	f.Add([]byte("\n"), uint32(3))
	f.Add([]byte(`{"a":[1,2,{"b":"c"}]}`), uint32(700))
	f.Fuzz(func(t *testing.T, unit []byte, m uint32) {
		if len(unit) == 0 {
			return
		}
		limit := minMaxBytes + int(m%uint32(1<<20-minMaxBytes+1))
		n := limit + 1 + int(m%997)
		data := bytes.Repeat(unit, n/len(unit)+1)
		rpEndToEnd(t, "fuzz", data, limit)
	})
}

// TestResultPolicyNeverChangesParts is a property: whatever the payload,
// the stored parts come back unchanged.
func TestResultPolicyNeverChangesParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for name, data := range rpAdversarial(50<<10, rng) {
		parts := []harness.Part{harness.TextPart(string(data)), harness.JSONPart([]byte(`{"k":1}`))}
		in := &harness.ToolResult{Parts: append([]harness.Part(nil), parts...)}
		out := rpCall(t, nil, rpContext(t.TempDir(), "c", harness.ReadOnly, nil), "tool", "call_1", in)
		if len(out.Parts) != 2 || out.Parts[0].Text != parts[0].Text || string(out.Parts[1].JSON) != `{"k":1}` {
			t.Fatalf("%s: parts changed", name)
		}
	}
	_ = context.Background
}

// TestMarkerUnnamedTool: a result whose call its request does not carry
// has no tool name; its marker names "the tool", in the full and the
// short form alike, never a blank.
func TestMarkerUnnamedTool(t *testing.T) {
	data := []byte(strings.Repeat("row of data\n", 4000))
	for _, limit := range []int{24576, 600} {
		m := cutMarker{mode: modeSpilled, size: int64(len(data)), limit: limit, path: "/w/.harness/spill/c/call_1.txt"}
		out, _ := renderCut(previewSourceOf(data), m, limit, HeadTail{}, false)
		if !strings.Contains(out, "[harness: the tool ") || strings.Contains(out, "[harness:  ") {
			t.Errorf("limit %d: marker %q", limit, out[strings.Index(out, "[harness:"):][:80])
		}
	}
}
