package bench

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/replay"
)

// catOutput is a 307,272-byte output of `cat` on a log file: the size the
// real CLIs were measured on.
func catOutput() string {
	var b strings.Builder
	for i := 0; b.Len() < 307_272; i++ {
		fmt.Fprintf(&b, "2026-04-06T10:%02d:%02d INFO worker-%d processed batch %06d in 12 ms\n", i/60%60, i%60, i%8, i)
	}
	return b.String()[:307_271] + "\n"
}

// TestMeasuredPeers replays one 307,272-byte cat under each measured
// peer's preset and compares what the model is shown with what the real
// CLI showed: Claude Code 2.1.197 2,230 bytes, Codex 0.171.0 10,212
// characters, Gemini CLI 0.61.0 40,281 bytes, opencode 1.18.33 51 KB of
// tail (the three that keep the rest say where).
func TestMeasuredPeers(t *testing.T) {
	out := catOutput()
	if len(out) != 307_272 {
		t.Fatalf("fixture is %d bytes", len(out))
	}
	args, _ := json.Marshal(map[string]string{"command": "cat build.log"})
	rec := &replay.Recording{Source: "cat", Format: replay.FormatOpenAI, ID: "cat",
		Tools: []harness.ToolSpec{{Name: "bash", Description: "run a command"}},
		Turns: []*replay.Turn{{Input: "what failed?", Calls: []*replay.Call{
			{Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: "c1", Name: "bash", Args: args}}},
				Results: []*replay.Result{{CallID: "c1", Tool: "bash", Full: []harness.Part{harness.TextPart(out)}, Shown: out}}},
			{Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("nothing failed")}}},
		}}}}
	for _, tc := range []struct {
		preset        string
		measured      int
		chars         bool // measured in characters, not bytes
		tolerance     float64
		head, tail    bool
		names, marker string
	}{
		{"claude-code", 2_230, false, 0.05, true, false, "Full output saved to: ", "<persisted-output>"},
		{"codex", 10_212, true, 0.02, true, true, "", "tokens truncated…"},
		{"gemini-cli", 40_281, false, 0.01, true, true, "For full output see: ", "characters omitted"},
		{"opencode", 51 << 10, false, 0.02, false, true, "Full output saved to: ", "bytes truncated..."},
	} {
		t.Run(tc.preset, func(t *testing.T) {
			p, err := Lookup(tc.preset)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := replay.Replay(t.Context(), rec, p.Policy(), &replay.Options{KeepText: true})
			if err != nil {
				t.Fatal(err)
			}
			shown := rep.Results[0].ModelText
			size := len(shown)
			if tc.chars {
				size = utf8.RuneCountInString(shown)
			}
			t.Logf("%s shows %d (the real CLI %d)", tc.preset, size, tc.measured)
			lo, hi := float64(tc.measured)*(1-tc.tolerance), float64(tc.measured)*(1+tc.tolerance)
			if float64(size) < lo || float64(size) > hi {
				t.Errorf("shown %d, the real CLI %d (±%.0f%%)", size, tc.measured, tc.tolerance*100)
			}
			if !strings.Contains(shown, tc.marker) || (tc.names != "" && !strings.Contains(shown, tc.names)) {
				t.Errorf("no %q / %q in %.300q", tc.marker, tc.names, shown)
			}
			if strings.Contains(shown, out[:200]) != tc.head || strings.HasSuffix(shown, out[len(out)-200:]) != tc.tail {
				t.Errorf("head kept %v (want %v), tail kept %v (want %v)", strings.Contains(shown, out[:200]), tc.head, strings.HasSuffix(shown, out[len(out)-200:]), tc.tail)
			}
		})
	}
}

// TestMeasuredCutsUnderLimit: outputs within each peer's limit are shown
// whole, and the cuts hold on odd input (one huge line, multibyte text).
func TestMeasuredCutsUnderLimit(t *testing.T) {
	small := strings.Repeat("ok\n", 1_000)
	if opencodeOver(small) || opencodeOver(strings.Repeat("x", 50<<10)) {
		t.Error("opencode cuts an output within 50 KiB and 2,000 lines")
	}
	if !opencodeOver(strings.Repeat("l\n", 2_001)) {
		t.Error("opencode keeps 2,001 lines")
	}
	lines := opencodeCut(strings.Repeat("l\n", 5_000), "")
	if strings.Count(lines, "\n") > 2_000+6 || !strings.HasPrefix(lines, "...3000 lines truncated...") {
		t.Errorf("by lines: %.60q, %d lines", lines, strings.Count(lines, "\n"))
	}
	one := opencodeCut(strings.Repeat("é", 100_000), "f")
	if !utf8.ValidString(one) || len(one) > (50<<10)+300 {
		t.Errorf("one long line: %d bytes, valid %v", len(one), utf8.ValidString(one))
	}
	g := geminiCut(strings.Repeat("ß", 100_000), "")
	if !utf8.ValidString(g) || utf8.RuneCountInString(g) > geminiThreshold+200 || strings.Contains(g, "see:") {
		t.Errorf("gemini: %d chars", utf8.RuneCountInString(g))
	}
	c := claudePersisted(strings.Repeat("€", 1_000), "/p")
	if !utf8.ValidString(c) || !strings.Contains(c, "(2.9KB)") {
		t.Errorf("claude: %q", c[:80])
	}
}

// FuzzMeasuredCuts: the measured peers' cuts never panic, give valid
// UTF-8 for valid input, and stay within their limits plus the notice.
func FuzzMeasuredCuts(f *testing.F) {
	f.Add("line\n", 80_000)
	f.Add("é", 60_000)
	f.Add("\n", 3_000)
	f.Fuzz(func(t *testing.T, unit string, n int) {
		if unit == "" || n <= 0 || n > 200_000 {
			return
		}
		text := strings.Repeat(unit, 1+n/len(unit))
		valid := utf8.ValidString(text)
		if opencodeOver(text) {
			got := opencodeCut(text, "/f")
			if len(got) > (50<<10)+400 || valid && !utf8.ValidString(got) {
				t.Fatalf("opencode: %d bytes", len(got))
			}
		}
		if utf8.RuneCountInString(text) > geminiThreshold {
			got := geminiCut(text, "/f")
			if utf8.RuneCountInString(got) > geminiThreshold+400 || valid && !utf8.ValidString(got) {
				t.Fatalf("gemini: %d chars", utf8.RuneCountInString(got))
			}
		}
		if got := claudePersisted(text, "/f"); len(got) > 2_000+200 || valid && !utf8.ValidString(got) {
			t.Fatalf("claude: %d bytes", len(got))
		}
	})
}
