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
	f.Add("😀", 40_000)
	f.Add("a\r\n", 9_000)
	f.Add(strings.Repeat("x", 2_500)+"\n", 60_000)
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
		if opencodeBoundOver(text) {
			got := opencodeBound(text, "/f")
			if len(got) > opencodeBytes || strings.Count(got, "\n") >= opencodeLines || valid && !utf8.ValidString(got) {
				t.Fatalf("opencode bound: %d bytes, %d lines", len(got), strings.Count(got, "\n")+1)
			}
		}
		if got, cut := opencodeReadCut(text); cut {
			body := got[:max(0, strings.LastIndex(got, "\n\n("))]
			if len(body) > opencodeBytes || strings.Count(body, "\n") >= opencodeLines || valid && !utf8.ValidString(got) {
				t.Fatalf("opencode read: %d bytes, %d lines", len(body), strings.Count(body, "\n")+1)
			}
		} else if got != text {
			t.Fatal("opencode read changed text it did not cut")
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

// numberedLines returns n lines "line i" of text, each ended by \n.
func numberedLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// TestOpencodeReadCut: opencode's read keeps the first lines within
// 2,000 lines and 50 KiB (the \n between lines counted), cuts a line to
// 2,000 UTF-16 code units, and says how to read on; nothing else moves.
func TestOpencodeReadCut(t *testing.T) {
	long := strings.Repeat("x", 999) + "\n" // 1,000 bytes a line
	// maxLines is how many of those lines fit: the first 999 bytes, then
	// 1,000 more each (its \n before it).
	maxLines := 1 + (opencodeBytes-999)/1_000
	for _, tc := range []struct {
		name    string
		text    string
		cut     bool
		shown   int    // lines shown
		note    string // the note after them
		lineCut string // when set, the text of the first line shown
	}{
		{name: "empty", text: ""},
		{name: "small", text: numberedLines(10)},
		{name: "2,000 lines", text: numberedLines(2_000)},
		{name: "2,000 lines, no final newline", text: strings.TrimSuffix(numberedLines(2_000), "\n")},
		{name: "2,001 lines", text: numberedLines(2_001), cut: true, shown: 2_000,
			note: "\n\n(Showing lines 1-2000 of 2001. Use offset=2001 to continue.)"},
		{name: "5,000 lines", text: numberedLines(5_000), cut: true, shown: 2_000,
			note: "\n\n(Showing lines 1-2000 of 5000. Use offset=2001 to continue.)"},
		{name: "by bytes", text: strings.Repeat(long, 100), cut: true, shown: maxLines,
			note: fmt.Sprintf("\n\n(Output capped at 50 KB. Showing lines 1-%d. Use offset=%d to continue.)", maxLines, maxLines+1)},
		{name: "bytes bind before lines", text: strings.Repeat(strings.Repeat("y", 99)+"\n", 3_000), cut: true, shown: 1 + (opencodeBytes-99)/100,
			note: fmt.Sprintf("\n\n(Output capped at 50 KB. Showing lines 1-%d. Use offset=%d to continue.)", 1+(opencodeBytes-99)/100, 2+(opencodeBytes-99)/100)},
		{name: "a line of 2,000 characters", text: strings.Repeat("é", 2_000)},
		{name: "a line of 3,000 characters", text: strings.Repeat("é", 3_000), cut: true, shown: 1,
			lineCut: strings.Repeat("é", 2_000) + opencodeLineNote},
		{name: "two-unit characters", text: strings.Repeat("😀", 1_500), cut: true, shown: 1,
			lineCut: strings.Repeat("😀", 1_000) + opencodeLineNote},
		{name: "a two-unit character across the limit", text: "a" + strings.Repeat("😀", 1_500), cut: true, shown: 1,
			lineCut: "a" + strings.Repeat("😀", 999) + opencodeLineNote},
		{name: "CRLF", text: strings.ReplaceAll(numberedLines(2_001), "\n", "\r\n"), cut: true, shown: 2_000,
			note: "\n\n(Showing lines 1-2000 of 2001. Use offset=2001 to continue.)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, cut := opencodeReadCut(tc.text)
			if cut != tc.cut || opencodeReadOver(tc.text) != tc.cut {
				t.Fatalf("cut %v, over %v, want %v", cut, opencodeReadOver(tc.text), tc.cut)
			}
			if !utf8.ValidString(got) {
				t.Error("invalid UTF-8")
			}
			if !tc.cut {
				if got != tc.text {
					t.Errorf("changed: %.80q", got)
				}
				return
			}
			body, ok := strings.CutSuffix(got, tc.note)
			if !ok {
				t.Fatalf("no note %q at the end of %.80q", tc.note, got[max(0, len(got)-120):])
			}
			if len(body) > opencodeBytes {
				t.Errorf("%d bytes of lines, over 50 KiB", len(body))
			}
			lines := strings.Split(body, "\n")
			if len(lines) != tc.shown {
				t.Fatalf("%d lines shown, want %d", len(lines), tc.shown)
			}
			if tc.lineCut != "" {
				if lines[0] != tc.lineCut {
					t.Errorf("line cut to %d bytes, want %d", len(lines[0]), len(tc.lineCut))
				}
				return
			}
			in := strings.Split(strings.ReplaceAll(tc.text, "\r\n", "\n"), "\n")
			if want := strings.Join(in[:tc.shown], "\n"); body != want {
				t.Errorf("lines shown are not the text's first %d", tc.shown)
			}
		})
	}
}

// TestOpencodeBound: every tool but the shell and read is cut by
// ToolOutputStore.bound: over 50 KiB or 2,000 lines, the first and last
// 998 lines (bytes when the lines are still too large) around the marker,
// the whole within 50 KiB.
func TestOpencodeBound(t *testing.T) {
	const loc = "/ws/.spill/c1.txt"
	marker := opencodeMarker(loc)
	half := (opencodeLines - 4 + 1) / 2 // lines in the head, as many in the tail
	headTail := func(text string) string {
		l := strings.Split(text, "\n")
		return strings.Join(l[:half], "\n") + "\n\n" + marker + "\n\n" + strings.Join(l[len(l)-half:], "\n")
	}
	budget := opencodeBytes - len(marker) - 4 // head and tail bytes
	for _, tc := range []struct {
		name  string
		text  string
		over  bool
		want  string // the exact cut, when the lines decide it
		bytes bool   // cut by bytes: a head and a tail of whole characters
	}{
		{name: "small", text: numberedLines(10)},
		{name: "1,999 newlines", text: strings.Repeat("l\n", 1_999)},
		{name: "50 KiB", text: strings.Repeat("x", opencodeBytes)},
		// 2,000 newlines are 2,001 lines to bound, 2,000 to the shell.
		{name: "2,000 newlines", text: strings.Repeat("l\n", 2_000), over: true, want: headTail(strings.Repeat("l\n", 2_000))},
		{name: "5,000 lines", text: numberedLines(5_000), over: true, want: headTail(numberedLines(5_000))},
		{name: "one long line", text: strings.Repeat("é", 100_000), over: true, bytes: true},
		{name: "lines then bytes", text: strings.Repeat(strings.Repeat("z", 99)+"\n", 3_000), over: true, bytes: true},
		{name: "few long lines", text: strings.Repeat(strings.Repeat("ß", 20_000)+"\n", 3), over: true, bytes: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if opencodeBoundOver(tc.text) != tc.over {
				t.Fatalf("over %v, want %v", !tc.over, tc.over)
			}
			if !tc.over {
				return
			}
			got := opencodeBound(tc.text, loc)
			if len(got) > opencodeBytes || strings.Count(got, "\n")+1 > opencodeLines || !utf8.ValidString(got) {
				t.Errorf("%d bytes, %d lines, valid %v", len(got), strings.Count(got, "\n")+1, utf8.ValidString(got))
			}
			if tc.want != "" && got != tc.want {
				t.Errorf("got %.80q…, want the first and last %d lines around the marker", got, half)
			}
			if !tc.bytes {
				return
			}
			head, tail, ok := strings.Cut(got, "\n\n"+marker+"\n\n")
			if !ok {
				t.Fatalf("no marker in %.80q", got)
			}
			if !strings.HasPrefix(tc.text, head) || !strings.HasSuffix(tc.text, tail) {
				t.Error("head or tail not the text's")
			}
			// Whole characters only, and as many as fit (a character is
			// at most 4 bytes).
			if hb, tb := (budget+1)/2, budget/2; len(head) > hb || len(head) <= hb-utf8.UTFMax || len(tail) > tb || len(tail) <= tb-utf8.UTFMax {
				t.Errorf("head %d of %d bytes, tail %d of %d", len(head), hb, len(tail), tb)
			}
		})
	}
	if got := opencodeBound(numberedLines(5_000), ""); !strings.Contains(got, "\n\n... output truncated ...\n\n") || strings.Contains(got, "saved to") {
		t.Errorf("no spill file: %q", got[len(got)/2-60:len(got)/2+60])
	}
	// A path too long to leave room: the marker alone, within both limits.
	huge := "/" + strings.Repeat("d/", opencodeBytes)
	if got := opencodeBound(numberedLines(5_000), huge); len(got) > opencodeBytes || !strings.HasPrefix(opencodeMarker(huge), got) || strings.Count(got, "\n") > 0 {
		t.Errorf("huge marker: %d bytes", len(got))
	}
}

// TestOpencodeHeadTail: bound's split on tiny inputs — half the lines
// (the head gets the odd one), then half the bytes of what they kept.
// The cases' results are what the binary's tB returns for them.
func TestOpencodeHeadTail(t *testing.T) {
	for _, tc := range []struct {
		text             string
		lines, bytes     int
		wantHead, wantTl string
	}{
		{"a\nb", 5, 100, "a\nb", ""},
		{"a\nb\nc\nd\ne", 3, 100, "a\nb", "e"},
		{"a\nb\nc\nd\ne", 4, 100, "a\nb", "d\ne"},
		{"a\nb\nc\nd\ne", 1, 100, "a", ""},
		{"abcdef", 10, 3, "ab", "f"},
		{"abcdef", 10, 4, "ab", "ef"},
		{"ééé", 10, 3, "é", ""},              // 2 bytes of head, 1 of tail: no half characters
		{"ééé", 10, 5, "é", "é"},             // 3 and 2 bytes
		{"aa\nbb\ncc\ndd", 2, 4, "aa", "dd"}, // the lines kept are "aa\ndd", 5 bytes
		{"€€\nx\ny\n€€", 2, 9, "€", "€"},     // 13 bytes kept: 5 of head, 4 of tail
		{"€€\nx\ny\n€€", 2, 12, "€€", "€€"},  // 6 and 6
		{"€€\nx\ny\n€€", 2, 13, "€€", "€€"},  // the lines fit
	} {
		head, tail := opencodeHeadTail(tc.text, tc.lines, tc.bytes)
		if head != tc.wantHead || tail != tc.wantTl {
			t.Errorf("opencodeHeadTail(%q, %d, %d) = %q, %q; want %q, %q", tc.text, tc.lines, tc.bytes, head, tail, tc.wantHead, tc.wantTl)
		}
	}
}

// TestOpencodePresetByTool replays one large output under each kind of
// tool opencode has: the shell keeps its tail and saves the rest, read
// keeps its head and saves nothing, every other tool keeps head and tail
// around the marker and saves the rest.
func TestOpencodePresetByTool(t *testing.T) {
	out := catOutput()
	p, err := Lookup("opencode")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool         string
		head, tail   bool
		state, shows string
	}{
		{"bash", false, true, "spilled", "bytes truncated..."},
		{"read", true, false, "trimmed", "(Output capped at 50 KB. Showing lines 1-"},
		{"Read", true, false, "trimmed", "Use offset="},
		{"grep", true, true, "spilled", "... output truncated; full content saved to "},
		{"glob", true, true, "spilled", "... output truncated; full content saved to "},
		{"webfetch", true, true, "spilled", "... output truncated; full content saved to "},
		{"mcp__docs__search", true, true, "spilled", "... output truncated; full content saved to "},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"q": "x"})
			rec := &replay.Recording{Source: "cat", Format: replay.FormatOpenAI, ID: "cat",
				Tools: []harness.ToolSpec{{Name: tc.tool, Description: "a tool"}},
				Turns: []*replay.Turn{{Input: "what failed?", Calls: []*replay.Call{
					{Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: "c1", Name: tc.tool, Args: args}}},
						Results: []*replay.Result{{CallID: "c1", Tool: tc.tool, Full: []harness.Part{harness.TextPart(out)}, Shown: out}}},
					{Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("nothing failed")}}},
				}}}}
			rep, err := replay.Replay(t.Context(), rec, p.Policy(), &replay.Options{KeepText: true})
			if err != nil {
				t.Fatal(err)
			}
			r := rep.Results[0]
			if r.State != tc.state || !strings.Contains(r.ModelText, tc.shows) {
				t.Errorf("state %s (want %s), shows %q: %.200q", r.State, tc.state, tc.shows, r.ModelText)
			}
			if len(r.ModelText) > opencodeBytes+400 {
				t.Errorf("%d bytes shown", len(r.ModelText))
			}
			if strings.HasPrefix(r.ModelText, out[:200]) != tc.head || strings.HasSuffix(r.ModelText, out[len(out)-200:]) != tc.tail {
				t.Errorf("head kept %v (want %v), tail kept %v (want %v)", strings.HasPrefix(r.ModelText, out[:200]), tc.head, strings.HasSuffix(r.ModelText, out[len(out)-200:]), tc.tail)
			}
		})
	}
}
