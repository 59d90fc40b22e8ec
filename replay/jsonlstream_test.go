package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// TestParseFileStreamAgreesWithParse: a Claude Code session read one line
// at a time imports exactly as the same bytes parsed whole, errors and
// partial last lines included.
func TestParseFileStreamAgreesWithParse(t *testing.T) {
	orig, err := os.ReadFile("testdata/claude-code/155715ec-f4e9-47ea-859c-2e4cfcceab6f.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	text := string(orig)
	lines := strings.SplitAfter(strings.TrimRight(text, "\n"), "\n")
	for _, tc := range []struct{ name, data string }{
		{"as written", text},
		{"crlf", strings.ReplaceAll(text, "\n", "\r\n")},
		{"blank lines", "\n  \n" + strings.Join(lines, "\n") + "\n\n"},
		{"no final newline", strings.TrimRight(text, "\n")},
		{"partial last line", text + lines[1][:len(lines[1])/2]},
		{"bad line", strings.Join(lines[:3], "") + "{\"type\": \"user\" \"x\"}\n" + strings.Join(lines[3:], "")},
		{"bad type", strings.Join(lines[:2], "") + "{\"type\": 5}\n" + strings.Join(lines[2:], "")},
		{"no model call", lines[0]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(path, []byte(tc.data), 0o600); err != nil {
				t.Fatal(err)
			}
			want, werr := ParseAll(path, []byte(tc.data))
			got, gerr := parseFileStream(path, nil)
			if fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Fatalf("error %v, want %v", gerr, werr)
			}
			if werr != nil {
				return
			}
			wj, _ := json.Marshal(want)
			gj, _ := json.Marshal(got)
			if string(gj) != string(wj) {
				t.Errorf("streamed import differs from the whole-file import:\n got %.400s\nwant %.400s", gj, wj)
			}
		})
	}
}

// TestParseFileStreamMemory: importing a transcript of many MiB holds
// about one record at a time, never the file: a Claude Code session and a
// Codex rollout, as JSONL and as one JSON array on one line (as Claude
// Code's hooks dump a session). The size is HARNESS_REPLAY_STREAM_MB
// (default 48).
func TestParseFileStreamMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a large file")
	}
	mb := 48
	if s := os.Getenv("HARNESS_REPLAY_STREAM_MB"); s != "" {
		var err error
		if mb, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	const line = 1 << 20
	for _, tc := range []struct {
		name  string
		write func(t *testing.T, path string, mb, line int, array bool)
		array bool
	}{
		{"claude-code.jsonl", writeBigSession, false},
		{"claude-code.json", writeBigSession, true},
		{"codex.jsonl", writeBigRollout, false},
		{"codex.json", writeBigRollout, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.name)
			tc.write(t, path, mb, line, tc.array)
			stop := heapPeak()
			recs, err := parseFileStream(path, nil)
			grew := stop()
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 1 || recs[0].Calls() != 2 {
				t.Fatalf("%d recordings, want one of 2 calls", len(recs))
			}
			t.Logf("%d MiB file, %d MiB records: heap grew by at most %.1f MiB", mb, line>>20, float64(grew)/(1<<20))
			if limit := uint64(16 * line); grew > limit {
				t.Errorf("heap grew by %d bytes importing a %d MiB file, want at most %d (16 records)", grew, mb, limit)
			}
		})
	}
}

// bigWriter writes the records of a transcript to a file, one a line or
// as the elements of one JSON array on one line.
type bigWriter struct {
	t     *testing.T
	f     *os.File
	array bool
	n     int
}

func newBigWriter(t *testing.T, path string, array bool) *bigWriter {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &bigWriter{t: t, f: f, array: array}
}

func (w *bigWriter) write(s string) {
	sep := "\n"
	if w.array {
		sep = ","
		if w.n == 0 {
			s = "[" + s
		}
	}
	if w.n > 0 {
		s = sep + s
	}
	w.n++
	if _, err := w.f.WriteString(s); err != nil {
		w.t.Fatal(err)
	}
}

func (w *bigWriter) close() {
	end := "\n"
	if w.array {
		end = "]"
	}
	if _, err := w.f.WriteString(end); err != nil {
		w.t.Fatal(err)
	}
	if err := w.f.Close(); err != nil {
		w.t.Fatal(err)
	}
}

// writeBigSession writes a Claude Code session of two model calls with
// progress entries of line bytes between them, mb MiB in all.
func writeBigSession(t *testing.T, path string, mb, line int, array bool) {
	t.Helper()
	w := newBigWriter(t, path, array)
	msg := func(i int, role, content string) string {
		return fmt.Sprintf(`{"type":%q,"sessionId":"big","uuid":"m%d","parentUuid":null,"message":{"id":"msg%d","role":%q,"content":%s,"usage":{"input_tokens":3,"output_tokens":1}}}`, role, i, i, role, content)
	}
	pad := strings.Repeat("x", line-100)
	w.write(msg(0, "user", `"hi"`))
	w.write(msg(1, "assistant", `[{"type":"text","text":"hello"}]`))
	for i := 0; i < mb; i++ {
		w.write(fmt.Sprintf(`{"type":"progress","sessionId":"big","uuid":"p%d","data":{"output":"%s"}}`, i, pad))
	}
	w.write(msg(2, "user", `"again"`))
	w.write(msg(3, "assistant", `[{"type":"text","text":"bye"}]`))
	w.close()
}

// writeBigRollout writes a Codex rollout of two model calls with events
// of line bytes between them (output deltas, which the import does not
// keep), mb MiB in all.
func writeBigRollout(t *testing.T, path string, mb, line int, array bool) {
	t.Helper()
	w := newBigWriter(t, path, array)
	item := func(payload string) string {
		return `{"timestamp":"2026-02-04T20:29:45.576Z","type":"response_item","payload":` + payload + `}`
	}
	msg := func(role, text string) string {
		typ := "input_text"
		if role == "assistant" {
			typ = "output_text"
		}
		return item(fmt.Sprintf(`{"type":"message","role":%q,"content":[{"type":%q,"text":%q}]}`, role, typ, text))
	}
	w.write(`{"timestamp":"2026-02-04T20:29:45.576Z","type":"session_meta","payload":{"id":"big","cli_version":"0.94.0"}}`)
	w.write(msg("user", "hi"))
	w.write(msg("assistant", "hello"))
	pad := strings.Repeat("x", line-100)
	for i := 0; i < mb; i++ {
		w.write(fmt.Sprintf(`{"timestamp":"2026-02-04T20:29:46Z","type":"event_msg","payload":{"type":"exec_command_output_delta","chunk":"%s"}}`, pad))
	}
	w.write(msg("user", "again"))
	w.write(msg("assistant", "bye"))
	w.close()
}

// heapPeak samples the heap until stop is called, which returns the most
// it grew above where it started. The collector runs at 10% growth
// meanwhile, so that garbage left by earlier tests' heaps does not count.
func heapPeak() func() uint64 {
	old := debug.SetGCPercent(10)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	done, out := make(chan struct{}), make(chan uint64)
	go func() {
		var top uint64
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			top = max(top, m.HeapAlloc)
			select {
			case <-done:
				out <- top - min(top, base)
				return
			default:
				runtime.Gosched()
			}
		}
	}()
	return func() uint64 {
		close(done)
		defer debug.SetGCPercent(old)
		return <-out
	}
}

// streamFixtures are the shipped transcripts parseFileStream reads record
// by record.
var streamFixtures = []string{
	"testdata/claude-code/155715ec-f4e9-47ea-859c-2e4cfcceab6f.jsonl",
	"testdata/claude-code/agent-a4e3ca2.jsonl",
	"testdata/claude-code/compacted.json",
	"testdata/claude-code/subagents.json",
	"testdata/codex/rollout-2025-08-30T12-52-41-9aa0221f-be4a-424a-8633-55496d1e2dc3.jsonl",
	"testdata/codex/rollout-2026-02-04T21-29-45-019c2a58-c0cc-7860-b9ca-7e2dcda03ddb.jsonl",
	"testdata/gemini-cli/output-stream-json.jsonl",
	"testdata/gemini-cli/session-2026-12-02T04-05-62a661cc.jsonl",
	"testdata/gemini-cli/session-2026-12-05T11-53-92970e04.jsonl",
	"testdata/gemini-cli/output-json.json",
	"testdata/gemini-cli/session-2026-04-06T10-00-hand.json",
}

// asArray returns a JSONL file's records as one JSON array on one line (a
// JSON array as it is, and a JSON value in an array of its own).
func asArray(t testing.TB, data []byte) []byte {
	t.Helper()
	if d := bytes.TrimSpace(data); len(d) > 0 && d[0] == '[' {
		return data
	}
	if json.Valid(data) {
		var b bytes.Buffer
		if err := json.Compact(&b, data); err != nil {
			t.Fatal(err)
		}
		return []byte("[" + b.String() + "]")
	}
	var out []byte
	for _, line := range bytes.Split(data, []byte("\n")) {
		if line = bytes.TrimSpace(line); len(line) == 0 {
			continue
		}
		if out == nil {
			out = append(out, '[')
		} else {
			out = append(out, ',')
		}
		out = append(out, line...)
	}
	return append(out, ']')
}

// TestParseFileStreamFormats: every format parseFileStream streams, as
// JSONL and as a one-line JSON array, whole or broken, imports as the
// same bytes parsed whole: the same recordings or the same error.
func TestParseFileStreamFormats(t *testing.T) {
	for _, fixture := range streamFixtures {
		orig, err := os.ReadFile(fixture)
		if err != nil {
			t.Fatal(err)
		}
		arr := asArray(t, orig)
		var indented bytes.Buffer
		if err := json.Indent(&indented, arr, "", "  "); err != nil {
			t.Fatal(err)
		}
		cut := len(arr) * 2 / 3
		for _, tc := range []struct{ name, data string }{
			{"as written", string(orig)},
			{"array", string(arr)},
			{"indented array", indented.String()},
			{"array after blank lines", "\n \n" + string(arr)},
			{"array cut short", string(arr[:cut])},
			{"array missing a comma", strings.Replace(string(arr), "},{", "} {", 1)},
			{"array with garbage inside", string(arr[:cut]) + "@" + string(arr[cut:])},
			{"array then more", string(arr) + " {}"},
			{"empty array", "[]"},
		} {
			t.Run(filepath.Base(fixture)+"/"+tc.name, func(t *testing.T) {
				assertStreamAgrees(t, filepath.Base(fixture), []byte(tc.data))
			})
		}
	}
}

// assertStreamAgrees writes data to a file named name and fails unless
// parseFileStream imports it as ParseAll does.
func assertStreamAgrees(t *testing.T, name string, data []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	want, werr := ParseAll(path, data)
	got, gerr := parseFileStream(path, nil)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Fatalf("error %v, want %v", gerr, werr)
	}
	if werr != nil {
		return
	}
	wj, _ := json.Marshal(want)
	gj, _ := json.Marshal(got)
	if string(gj) != string(wj) {
		t.Errorf("streamed import differs from the whole-file import:\n got %.400s\nwant %.400s", gj, wj)
	}
}

// FuzzParseFileStream: whatever the bytes, reading a file as a stream
// gives what parsing it whole gives.
func FuzzParseFileStream(f *testing.F) {
	for _, fixture := range streamFixtures {
		data, err := os.ReadFile(fixture)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(filepath.Base(fixture), data)
		f.Add(filepath.Base(fixture), asArray(f, data))
	}
	f.Add("s.json", []byte(`[{"type":"user","sessionId":"s","uuid":"a","message":{"role":"user","content":"hi"}} {}]`))
	f.Add("s.jsonl", []byte(`[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"yo"}]}]`))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		name = filepath.Base(name)
		if name == "." || name == "/" || name == "" || strings.ContainsAny(name, "\x00") || len(name) > 100 {
			name = "f.jsonl"
		}
		assertStreamAgrees(t, name, data)
	})
}

// TestReadWholeIsBounded: a file in a format read whole is refused with an
// error naming the formats that stream once it passes the limit, and
// reading it stops one byte past the limit.
func TestReadWholeIsBounded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		head    string
		rest    string
		limit   int64
		wantErr bool
	}{
		{"under", `{"a":`, `1}`, 16, false},
		{"at the limit", `{"a":`, `12345678901}`, 17, false},
		{"over", `{"a":`, `123456789012}`, 17, true},
		{"head alone over", `{"a":123456789012}`, ``, 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := strings.NewReader(tc.rest)
			got, err := readWhole(r, []byte(tc.head), tc.limit)
			if tc.wantErr {
				if !errors.Is(err, errTooLargeToReadWhole) || !strings.Contains(err.Error(), "Codex rollouts") {
					t.Fatalf("err %v, want errTooLargeToReadWhole naming the streamed formats", err)
				}
				if read := int64(len(tc.rest) - r.Len()); read > tc.limit+1 {
					t.Errorf("read %d bytes past a limit of %d", read, tc.limit)
				}
				return
			}
			if err != nil || string(got) != tc.head+tc.rest {
				t.Fatalf("readWhole = %q, %v; want %q", got, err, tc.head+tc.rest)
			}
		})
	}
}
