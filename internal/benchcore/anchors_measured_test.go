package benchcore

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
// characters, Gemini CLI 0.61.0 40,281 bytes, opencode 1.18.33 51,343
// characters of tail, of a 307,342-byte cat in a run whose pipe reads
// left it 50 KB (the three that keep the rest say where).
func TestMeasuredPeers(t *testing.T) {
	out := catOutput()
	if len(out) != 307_272 {
		t.Fatalf("fixture is %d bytes", len(out))
	}
	args, _ := json.Marshal(map[string]string{"command": "cat build.log"})
	rec := &replay.Recording{Source: "cat", Format: "openai-chat", ID: "cat",
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
		{"opencode", 51_343, false, 0.01, false, true, "Full output saved to: ", "...output truncated...\n\n"},
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
	// 5,000 newlines are 5,001 lines, the last empty: the last 2,000.
	if lines := opencodeCut(strings.Repeat("l\n", 5_000), ""); lines != "...output truncated...\n\n"+strings.Repeat("l\n", 1_999) {
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
		if opencodeOver(text) {
			got := opencodeHeadCut(text, "/f")
			body, _, _ := strings.Cut(got, "\n\n...")
			if len(body) > opencodeBytes || strings.Count(body, "\n") >= opencodeLines || !strings.HasPrefix(text, body) || valid && !utf8.ValidString(got) {
				t.Fatalf("opencode head cut: %d bytes, %d lines", len(body), strings.Count(body, "\n")+1)
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

// TestOpencodeHeadCut: an MCP tool's result over 50 KiB or 2,000 lines
// is shown as its first lines within both, then how much was cut (bytes,
// or lines when the line limit stopped it) and the hint naming the file,
// as opencode 1.18.33 sent the filesystem server's read of a 307,342-byte
// lock file: 1,297 lines, 51,197 bytes, "...256145 bytes truncated...".
func TestOpencodeHeadCut(t *testing.T) {
	const loc = "/ws/.spill/c1.txt"
	hint := opencodeTaskHint(loc)
	entry := func(i int) string { // a lock file's entry: 4 lines, 154 to 156 bytes
		return fmt.Sprintf("    \"node_modules/pkg-%05d\": {\n      \"version\": \"%d.%d.%d\",\n      \"integrity\": \"sha512-%064d\"\n    },\n", i, i%9+1, i%13, i%7, i)
	}
	var lock strings.Builder
	for i := 0; lock.Len() < 300<<10; i++ {
		lock.WriteString(entry(i))
	}
	for _, tc := range []struct {
		name, text, want string
		over             bool
	}{
		{name: "small", text: numberedLines(10)},
		{name: "2,000 lines", text: strings.Repeat("l\n", 1_999) + "l"},
		{name: "50 KiB", text: strings.Repeat("x", opencodeBytes)},
		// 2,000 newlines are 2,001 lines: the line limit stops it.
		{name: "2,000 newlines", text: strings.Repeat("l\n", 2_000), over: true,
			want: strings.TrimSuffix(strings.Repeat("l\n", 2_000), "\n") + "\n\n...1 lines truncated...\n\n" + hint},
		{name: "one long line", text: strings.Repeat("é", 30_000), over: true,
			want: "\n\n...60000 bytes truncated...\n\n" + hint},
		{name: "bytes stop first", text: strings.Repeat(strings.Repeat("z", 99)+"\n", 1_000), over: true,
			want: strings.TrimSuffix(strings.Repeat(strings.Repeat("z", 99)+"\n", 512), "\n") + fmt.Sprintf("\n\n...%d bytes truncated...\n\n", 100_000-(512*100-1)) + hint},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if opencodeOver(tc.text) != tc.over {
				t.Fatalf("over %v, want %v", !tc.over, tc.over)
			}
			if tc.over {
				if got := opencodeHeadCut(tc.text, loc); got != tc.want {
					t.Errorf("got %d bytes …%q, want %d …%q", len(got), got[max(0, len(got)-80):], len(tc.want), tc.want[max(0, len(tc.want)-80):])
				}
			}
		})
	}
	// The measured case, on a lock file built the same way (its header
	// aside: the count of lines and bytes kept is what is checked).
	text := "{\n  \"name\": \"app\",\n  \"lockfileVersion\": 3,\n  \"packages\": {\n" + lock.String() + "  }\n}\n"
	got := opencodeHeadCut(text, loc)
	body, rest, _ := strings.Cut(got, "\n\n...")
	if n := strings.Count(body, "\n") + 1; n != 1_297 || len(body) != 51_197 || !strings.HasPrefix(rest, fmt.Sprintf("%d bytes truncated...", len(text)-51_197)) {
		t.Errorf("the lock file: %d lines, %d bytes kept, then %.40q; opencode kept 1,297 lines, 51,197 bytes", n, len(body), rest)
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
		{"bash", false, true, "spilled", "...output truncated...\n\nFull output saved to: "},
		{"read", true, false, "trimmed", "(Output capped at 50 KB. Showing lines 1-"},
		{"Read", true, false, "trimmed", "Use offset="},
		{"grep", true, false, "spilled", "bytes truncated...\n\nThe tool call succeeded but the output was truncated. Full output saved to: "},
		{"webfetch", true, false, "spilled", "Use the Task tool to have explore agent process this file"},
		{"fs_read_text_file", true, false, "spilled", "bytes truncated...\n\nThe tool call succeeded but the output was truncated. Full output saved to: "},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"q": "x"})
			rec := &replay.Recording{Source: "cat", Format: "openai-chat", ID: "cat",
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
