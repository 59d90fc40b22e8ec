package workspace

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestReadFilePages(t *testing.T) {
	w, _ := newTestWorkspace(t, nil, map[string]string{"a.txt": numbered(10)})
	res := run(t, w, "read_file", map[string]any{"path": "a.txt", "offset": 3, "limit": 4})
	text := mustOK(t, res)
	want := "     3\tline 3\n     4\tline 4\n     5\tline 5\n     6\tline 6\n" +
		"[a.txt: lines 3-6 of 10; 4 more lines — continue with offset=7]"
	if text != want {
		t.Fatalf("got:\n%s\nwant:\n%s", text, want)
	}
	m := res.Meta
	if m["path"] != "a.txt" || m["total_lines"] != 10 || m["more"] != true || m["next_offset"] != 7 {
		t.Fatalf("meta %v", m)
	}

	text = mustOK(t, run(t, w, "read_file", map[string]any{"path": "a.txt"}))
	if !strings.HasSuffix(text, "[a.txt: lines 1-10 of 10 (end of file)]") || stripNumbers(t, text) != numbered(10) {
		t.Fatalf("whole file: %s", text)
	}

	text = mustOK(t, run(t, w, "read_file", map[string]any{"path": "a.txt", "offset": -3}))
	if !strings.HasPrefix(text, "     8\tline 8\n") || !strings.Contains(text, "lines 8-10 of 10 (end of file)") {
		t.Fatalf("negative offset: %s", text)
	}
	text = mustOK(t, run(t, w, "read_file", map[string]any{"path": "a.txt", "offset": -50, "limit": 2}))
	if !strings.HasPrefix(text, "     1\tline 1\n") {
		t.Fatalf("negative offset beyond the start: %s", text)
	}

	mustFail(t, run(t, w, "read_file", map[string]any{"path": "a.txt", "offset": 11}), "past the end", "10 lines")
	mustFail(t, run(t, w, "read_file", map[string]any{"path": "a.txt", "limit": 0, "bogus": 1}), "unknown field")
	mustFail(t, run(t, w, "read_file", map[string]any{"path": "a.txt", "limit": -1}), "limit")
	mustFail(t, run(t, w, "read_file", map[string]any{}), "path is required")
}

// TestReadFilePagingReassembles pages through a file by following the
// next offset and checks that the pages put together are the file.
func TestReadFilePagingReassembles(t *testing.T) {
	var content strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&content, "%d %s\n", i, strings.Repeat("x", i%97))
	}
	content.WriteString("last line without newline")
	w, _ := newTestWorkspace(t, &Options{ReadMaxBytes: 5000}, map[string]string{"big.txt": content.String()})
	var got strings.Builder
	offset, pages := int64(1), 0
	for {
		res := run(t, w, "read_file", map[string]any{"path": "big.txt", "offset": offset})
		text := mustOK(t, res)
		if len(text) > 5000 {
			t.Fatalf("page of %d bytes exceeds ReadMaxBytes 5000", len(text))
		}
		got.WriteString(stripNumbers(t, text))
		pages++
		if res.Meta["more"] != true {
			break
		}
		offset = int64(res.Meta["next_offset"].(int))
	}
	if want := content.String() + "\n"; got.String() != want {
		t.Fatalf("reassembled %d bytes, want %d", got.Len(), len(want))
	}
	if pages < 10 {
		t.Fatalf("only %d pages: the byte budget was not applied", pages)
	}
}

func TestReadFileSpecialContent(t *testing.T) {
	long := strings.Repeat("é", 3000) // 6000 bytes of two-byte runes
	w, dir := newTestWorkspace(t, nil, map[string]string{
		"empty.txt":                          "",
		"crlf.txt":                           "one\r\ntwo\r\n",
		"long.txt":                           "short\n" + long + "\nafter\n",
		"bad.txt":                            "ok \xff\xfe bytes\n",
		"src/":                               "",
		".harness/spill/c1/call_1-shell.txt": "spilled line\n",
	})
	text := mustOK(t, run(t, w, "read_file", map[string]any{"path": "empty.txt"}))
	if text != "[empty.txt: empty file (0 lines)]" {
		t.Fatalf("empty: %q", text)
	}
	if text := mustOK(t, run(t, w, "read_file", map[string]any{"path": "crlf.txt"})); strings.Contains(text, "\r") {
		t.Fatalf("CRLF shown: %q", text)
	}
	text = mustOK(t, run(t, w, "read_file", map[string]any{"path": "long.txt"}))
	if !strings.Contains(text, "[line cut: 2000 of 6000 bytes shown]") || !strings.Contains(text, "     3\tafter") || !strings.Contains(text, "1 long line cut at 2000 bytes") {
		t.Fatalf("long line: %s", text)
	}
	if text := mustOK(t, run(t, w, "read_file", map[string]any{"path": "bad.txt"})); !strings.Contains(text, "ok \uFFFD bytes") {
		t.Fatalf("invalid UTF-8 not replaced: %q", text)
	}
	mustFail(t, run(t, w, "read_file", map[string]any{"path": "src"}), "is a directory", "list_dir")

	// Spill files are readable and Meta["path"] names them relative to the
	// workspace, for the result policy to recognise.
	res := run(t, w, "read_file", map[string]any{"path": filepath.Join(dir, ".harness", "spill", "c1", "call_1-shell.txt")})
	mustOK(t, res)
	if res.Meta["path"] != ".harness/spill/c1/call_1-shell.txt" || res.Meta["total_lines"] != 1 {
		t.Fatalf("meta %v", res.Meta)
	}
}

func TestReadFileBinaryRefused(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"
	w, _ := newTestWorkspace(t, nil, map[string]string{
		"logo.png": png,
		"ctl.bin":  strings.Repeat("\x01\x02\x03\x04a", 100),
	})
	mustFail(t, run(t, w, "read_file", map[string]any{"path": "logo.png"}), "binary file", "image/png", "NUL")
	mustFail(t, run(t, w, "read_file", map[string]any{"path": "ctl.bin"}), "binary file", "control characters")
}

// TestReadFileLargeOffsetBoundedMemory reads a page from the middle of a
// 50 MB file and measures, with runtime.MemStats, how much the call
// allocated: the file must be streamed, not loaded.
func TestReadFileLargeOffsetBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 50 MB file")
	}
	w, dir := newTestWorkspace(t, nil, nil)
	path := filepath.Join(dir, "big.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	const size = 50 << 20
	var lines int64
	var written int
	for written < size {
		lines++
		n, _ := fmt.Fprintf(bw, "%09d %s\n", lines, strings.Repeat("abcdefgh", 8))
		written += n
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	offset := lines / 2
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	res := run(t, w, "read_file", map[string]any{"path": "big.log", "offset": offset, "limit": 5})
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	text := mustOK(t, res)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("50 MB file (%d lines), page at line %d: %d bytes allocated by the call (%.4f of the file), %s",
		lines, offset, allocated, float64(allocated)/float64(written), elapsed.Round(time.Millisecond))

	if !strings.HasPrefix(text, fmt.Sprintf("%6d\t%09d abcdefgh", offset, offset)) {
		t.Fatalf("wrong page: %.200s", text)
	}
	if res.Meta["total_lines"] != int(lines) {
		t.Fatalf("total_lines %v, want %d", res.Meta["total_lines"], lines)
	}
	// The read buffer is 64 KiB and the page a few hundred bytes; allow
	// generous slack for the tool plumbing but nothing near the file size.
	if allocated > 1<<20 {
		t.Fatalf("the call allocated %d bytes for a 5-line page of a %d-byte file", allocated, written)
	}
}
