package replay

import (
	"encoding/json"
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

// TestParseFileStreamMemory: importing a Claude Code session of many MiB
// holds about one entry at a time, never the file. The size is
// HARNESS_REPLAY_STREAM_MB (default 48).
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
	path := filepath.Join(t.TempDir(), "big.jsonl")
	writeBigSession(t, path, mb, line)
	stop := heapPeak()
	recs, err := parseFileStream(path, nil)
	grew := stop()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Calls() != 2 {
		t.Fatalf("%d recordings, want one of 2 calls", len(recs))
	}
	t.Logf("%d MiB file, %d MiB lines: heap grew by at most %.1f MiB", mb, line>>20, float64(grew)/(1<<20))
	if limit := uint64(16 * line); grew > limit {
		t.Errorf("heap grew by %d bytes importing a %d MiB file, want at most %d (16 lines)", grew, mb, limit)
	}
}

// writeBigSession writes a Claude Code session of two model calls with
// progress entries of line bytes between them, mb MiB in all.
func writeBigSession(t *testing.T, path string, mb, line int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	msg := func(i int, role, content string) string {
		return fmt.Sprintf(`{"type":%q,"sessionId":"big","uuid":"m%d","parentUuid":null,"message":{"id":"msg%d","role":%q,"content":%s,"usage":{"input_tokens":3,"output_tokens":1}}}`+"\n", role, i, i, role, content)
	}
	pad := strings.Repeat("x", line-100)
	w := func(s string) {
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	w(msg(0, "user", `"hi"`))
	w(msg(1, "assistant", `[{"type":"text","text":"hello"}]`))
	for i := 0; i < mb; i++ {
		w(fmt.Sprintf(`{"type":"progress","sessionId":"big","uuid":"p%d","data":{"output":"%s"}}`+"\n", i, pad))
	}
	w(msg(2, "user", `"again"`))
	w(msg(3, "assistant", `[{"type":"text","text":"bye"}]`))
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
