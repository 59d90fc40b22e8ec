package replay

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

func TestParseMiniSWE(t *testing.T) {
	rec, err := ParseFile("testdata/pydicom-trimmed.traj.json")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Format != formatMiniSWE || rec.ID != "pydicom__pydicom-1256" || rec.Model != "deepseek-chat" {
		t.Errorf("format %q id %q model %q", rec.Format, rec.ID, rec.Model)
	}
	if !strings.HasPrefix(rec.System, "You are a helpful assistant") || len(rec.Turns) != 1 {
		t.Fatalf("system %q, %d turns", rec.System, len(rec.Turns))
	}
	calls := rec.Turns[0].Calls
	if len(calls) != 8 {
		t.Fatalf("%d calls, want 8 (7 answered and the final submit)", len(calls))
	}
	if c := calls[0]; !c.HasUsage || c.Usage.Input != 1671 || c.Usage.Cached != 320 || c.Usage.Output == 0 || c.Request != 2 {
		t.Errorf("first call: usage %+v has %v request %d", c.Usage, c.HasUsage, c.Request)
	}
	if last := calls[7]; len(last.Assistant.ToolCalls) != 1 || len(last.Results) != 0 {
		t.Errorf("the submit call has %d calls and %d results", len(last.Assistant.ToolCalls), len(last.Results))
	}
	// Message 7 is the 10,305-character output the agent showed as head
	// and tail: the full result is the raw output in <output> tags.
	big := calls[2].Results[0]
	full := big.FullText()
	if !strings.HasPrefix(full, "<returncode>0</returncode>\n<output>\n") || !strings.HasSuffix(full, "</output>") {
		t.Errorf("full output not rebuilt: %q … %q", full[:60], full[len(full)-20:])
	}
	if strings.Contains(full, "<warning>") || !strings.Contains(big.Shown, "<warning>") || len(full) < 10305 {
		t.Errorf("full %d chars, shown %d chars", len(full), len(big.Shown))
	}
	if small := calls[0].Results[0]; small.FullText() != small.Shown {
		t.Errorf("an uncut output differs from what was shown")
	}
	if len(rec.Tools) != 1 || rec.Tools[0].Name != "bash" {
		t.Errorf("tools %+v", rec.Tools)
	}
}

func TestParseFormatsAgree(t *testing.T) {
	for _, f := range []string{"testdata/chat.json", "testdata/chat.jsonl"} {
		rec, err := ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Format != formatOpenAI || rec.System != "You are a coding agent." || len(rec.Turns) != 1 {
			t.Fatalf("%s: %+v", f, rec)
		}
		calls := rec.Turns[0].Calls
		if len(calls) != 2 || calls[0].Assistant.ToolCalls[0].Name != "read_file" || string(calls[0].Assistant.ToolCalls[0].Args) != `{"path": "package-lock.json"}` {
			t.Fatalf("%s: calls %+v", f, calls)
		}
		if r := calls[0].Results[0]; r.Tool != "read_file" || !strings.Contains(r.FullText(), "3.23.8") || r.Shown != r.FullText() {
			t.Errorf("%s: result %+v", f, r)
		}
		if u := calls[1].Usage; u != (harness.Usage{Input: 200, Cached: 120, Output: 30}) || calls[1].Request != 4 {
			t.Errorf("%s: usage %+v request %d", f, u, calls[1].Request)
		}
	}
	rec, err := ParseFile("testdata/conversation.json")
	if err != nil {
		t.Fatal(err)
	}
	calls := rec.Turns[0].Calls
	if rec.ID != "c_demo" || len(calls) != 3 || calls[1].Results[0].Shown != "package main\n… (trimmed)" ||
		!strings.Contains(calls[1].Results[0].FullText(), "computeChecksum") || calls[2].Usage.Cached != 340 {
		t.Errorf("conversation: %+v", calls)
	}
}

func TestParseErrorsNamePosition(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		line, col  int
		want       string
	}{
		{"bad.json", "[\n  {\"role\": \"user\", \"content\": \"hi\"},\n  {\"role\": \"assistant\" \"content\": 1}\n]", 3, 24, "invalid JSON"},
		{"orphan.json", "[{\"role\": \"user\", \"content\": \"hi\"},\n {\"role\": \"tool\", \"tool_call_id\": \"x\", \"content\": \"y\"}]", 2, 2, "no earlier assistant message called"},
		{"role.jsonl", "{\"role\": \"user\", \"content\": \"hi\"}\n{\"role\": \"robot\", \"content\": \"x\"}\n", 2, 1, "unknown role"},
		{"type.json", "[{\"role\": \"user\", \"content\": 5}]", 1, 2, "content"},
		{"a.traj.json", "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}, {\"role\": \"assistant\", \"tool_calls\": [{\"id\": \"a\", \"function\": {\"name\": \"bash\", \"arguments\": 7}}]}]}", 1, 49, "arguments"},
		{"trunc.traj.json", "{\"messages\": [{\"role\": \"user\"", 1, 29, "invalid JSON"},
		{"conv.json", "{\"id\": \"c\", \"turns\": [{\"input\": \"x\", \"rounds\": [{\"index\": \"one\"}]}]}", 1, 63, "unexpected JSON type"},
	} {
		_, err := Parse(tc.name, []byte(tc.data))
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%s: error %v is not a ParseError", tc.name, err)
			continue
		}
		if pe.File != tc.name || pe.Line != tc.line || pe.Col != tc.col || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %s (line %d col %d), want line %d col %d mentioning %q", tc.name, err, pe.Line, pe.Col, tc.line, tc.col, tc.want)
		}
		if !strings.HasPrefix(err.Error(), tc.name+":") {
			t.Errorf("%s: error does not start with the file name: %s", tc.name, err)
		}
	}
	if _, err := Parse("notes.txt", []byte("x")); !errors.Is(err, ErrNotTranscript) {
		t.Errorf("notes.txt: %v", err)
	}
}

func TestLoadMixedFolder(t *testing.T) {
	recs, skipped, err := Load("testdata/mixed")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Format != formatOpenAI || recs[1].Format != formatConversation {
		t.Fatalf("imported %d recordings", len(recs))
	}
	want := map[string]string{
		"c-orphan.json": "c-orphan.json:2:2", "d-syntax.json": "d-syntax.json:1:", "e-notes.txt": "not a transcript",
		"f-other.json": "not a transcript",
	}
	if len(skipped) != len(want) {
		t.Fatalf("skipped %+v", skipped)
	}
	for _, s := range skipped {
		w, ok := want[filepath.Base(s.Path)]
		if !ok || !strings.Contains(s.Reason, w) {
			t.Errorf("skipped %s: %s (want %q)", s.Path, s.Reason, w)
		}
	}
	if _, _, err := Load(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing path: %v", err)
	}
}

// TestLoadEachYieldsInLoadOrder checks that LoadEach hands out what
// LoadWith returns, in the same order, reports the same skipped files,
// and stops at yield's first error.
func TestLoadEachYieldsInLoadOrder(t *testing.T) {
	dir := filepath.Join("testdata", "mixed")
	recs, skipped, err := LoadWith(t.Context(), nil, dir, "testdata")
	if err != nil || len(recs) < 2 {
		t.Fatalf("LoadWith: %d recordings, %v", len(recs), err)
	}
	var got []*Recording
	sk, err := LoadEach(t.Context(), nil, []string{dir, "testdata"}, func(r *Recording) error {
		got = append(got, r)
		return nil
	})
	if err != nil || len(got) != len(recs) || len(sk) != len(skipped) {
		t.Fatalf("LoadEach: %d recordings (want %d), %d skipped (want %d), %v", len(got), len(recs), len(sk), len(skipped), err)
	}
	for i := range got {
		if got[i].Source != recs[i].Source || got[i].ID != recs[i].ID {
			t.Errorf("recording %d: %s %s, LoadWith %s %s", i, got[i].Source, got[i].ID, recs[i].Source, recs[i].ID)
		}
	}
	stop := errors.New("enough")
	n := 0
	if _, err := LoadEach(t.Context(), nil, []string{dir}, func(*Recording) error { n++; return stop }); err != stop || n != 1 {
		t.Fatalf("yield's error: %v after %d recordings", err, n)
	}
	if _, err := LoadEach(t.Context(), nil, []string{filepath.Join(dir, "no-such-file")}, func(*Recording) error {
		t.Error("a recording was yielded for a path that cannot be read")
		return nil
	}); err == nil {
		t.Fatal("a missing path gave no error")
	}
}

// TestLoadPassesOverSavedOutputs: in a folder laid out as ~/.claude/projects
// is (a session, and the whole outputs Claude Code cut in
// <session>/tool-results/), the session is imported and the saved outputs
// are listed as skipped (ErrSavedOutput) without being read, even one that
// would parse as a transcript; named directly, such a file is read.
func TestLoadPassesOverSavedOutputs(t *testing.T) {
	dir := t.TempDir()
	session, err := os.ReadFile("testdata/claude-code/155715ec-f4e9-47ea-859c-2e4cfcceab6f.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	write := func(rel string, data []byte) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("proj/155715ec.jsonl", session)
	write("proj/155715ec/tool-results/toolu_1.txt", []byte("line 1 of a long output\n"))
	lookalike := write("proj/155715ec/tool-results/toolu_2.txt", session) // a transcript's bytes, still an output
	write("gemini/tmp/abc/tool-outputs/session-1/run_shell_command_1.txt", []byte("output\n"))
	recs, skipped, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 || recs[0].Format != formatClaudeCode {
		t.Fatalf("imported %d recordings, want the session's", len(recs))
	}
	for _, r := range recs {
		if strings.Contains(r.Source, "tool-results") {
			t.Errorf("a saved output was imported: %s", r.Source)
		}
	}
	if len(skipped) != 3 {
		t.Fatalf("skipped %+v, want the three saved outputs", skipped)
	}
	for _, s := range skipped {
		if !errors.Is(s.Err, ErrSavedOutput) {
			t.Errorf("skipped %s: %v, want ErrSavedOutput", s.Path, s.Err)
		}
	}
	direct, skipped, err := Load(lookalike)
	if err != nil || len(skipped) != 0 || len(direct) == 0 {
		t.Errorf("named directly: %d recordings, skipped %+v, error %v; want it read", len(direct), skipped, err)
	}
}

// TestFormats: every shipped transcript imports with a Format that
// formats lists.
func TestFormats(t *testing.T) {
	recs, _, err := Load("testdata")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range recs {
		if !slices.Contains(formats(), r.Format) {
			t.Errorf("%s: format %q is not in formats()", r.Source, r.Format)
		}
		seen[r.Format] = true
	}
	if len(seen) < 8 {
		t.Errorf("the fixtures gave %d formats, want at least 8", len(seen))
	}
}
