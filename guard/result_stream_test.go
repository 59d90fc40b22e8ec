package guard

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentharness/harness"
)

// rpStream is a tool's output stream that records being closed and can
// fail after a number of bytes.
type rpStream struct {
	r      io.Reader
	closed atomic.Bool
	failAt int // fail with an error after this many bytes (0: never)
	n      int
}

func (s *rpStream) Read(p []byte) (int, error) {
	if s.closed.Load() {
		return 0, os.ErrClosed
	}
	if s.failAt > 0 && s.n >= s.failAt {
		return 0, errors.New("pipe broke")
	}
	if s.failAt > 0 {
		p = p[:min(len(p), s.failAt-s.n)]
	}
	n, err := s.r.Read(p)
	s.n += n
	return n, err
}

func (s *rpStream) Close() error { s.closed.Store(true); return nil }

func rpStreamResult(text string) (*harness.ToolResult, *rpStream) {
	s := &rpStream{r: strings.NewReader(text)}
	return &harness.ToolResult{Stream: s}, s
}

func TestResultPolicyStreamThatFits(t *testing.T) {
	in, s := rpStreamResult("hello\nworld\n")
	out := rpCall(t, nil, rpContext(t.TempDir(), "c", harness.ReadOnly, nil), "shell", "call_1", in)
	if out.Stream != nil || !s.closed.Load() {
		t.Fatal("stream not consumed and closed")
	}
	if len(out.Parts) != 1 || out.Parts[0].Text != "hello\nworld\n" || out.Model != nil || len(out.Cuts) != 0 {
		t.Fatalf("result %+v", out)
	}
}

func TestResultPolicyStreamSpills(t *testing.T) {
	ws := t.TempDir()
	log := rpLog(300 << 10)
	in, s := rpStreamResult(log)
	in.Meta = map[string]any{"exit_code": 1}
	ev := &rpEvents{}
	out := rpCall(t, nil, rpContext(ws, "c", harness.ReadOnly, ev), "shell", "call_1", in)
	if !s.closed.Load() || out.Stream != nil {
		t.Fatal("stream not closed")
	}
	if len(out.Cuts) != 1 || out.Cuts[0].Kind != harness.CutSpilled {
		t.Fatalf("cuts %+v", out.Cuts)
	}
	cut := out.Cuts[0]
	data, err := os.ReadFile(filepath.Join(ws, cut.Locator))
	if err != nil || string(data) != log {
		t.Fatalf("spill file does not hold the stream (%d of %d bytes, %v)", len(data), len(log), err)
	}
	text := rpModelText(out)
	if len(text) > DefaultMaxBytes || !strings.Contains(text, "FAIL: TestVerdict") || !strings.Contains(text, "step 00001") {
		t.Fatalf("model copy (%d bytes) misses head or verdict", len(text))
	}
	// The transcript keeps the model copy; the spill file is the record.
	if len(out.Parts) != 1 || out.Parts[0].Text != text {
		t.Fatal("the transcript record of a spilled stream is not its model copy")
	}
	if out.Bytes != len(log) || cut.BytesIn != len(log) || out.Meta["stream_bytes"] != int64(len(log)) || out.Meta["spill_path"] != cut.Locator || out.Meta["exit_code"] != 1 {
		t.Fatalf("bytes %d, cut %+v, meta %v", out.Bytes, cut, out.Meta)
	}
	if len(ev.kind(harness.EventPolicy)) != 1 {
		t.Fatal("no policy event")
	}
}

func TestResultPolicyStreamWithoutSpill(t *testing.T) {
	// Kept whole in memory: the transcript has it all.
	log := rpLog(100 << 10)
	in, _ := rpStreamResult(log)
	out := rpCall(t, &ResultPolicy{NoSpill: true}, rpContext("", "c", harness.ReadOnly, nil), "shell", "call_1", in)
	if len(out.Parts) != 1 || out.Parts[0].Text != log || out.Cuts[0].Kind != harness.CutTruncated {
		t.Fatalf("parts %d, cuts %+v", len(out.Parts), out.Cuts)
	}
	if !strings.Contains(rpModelText(out), "transcript only") {
		t.Fatal("marker does not say where the rest is")
	}

	// Longer than StreamKeep: the middle is lost, and the marker says so.
	long := rpLog(2 << 20)
	in, _ = rpStreamResult(long)
	out = rpCall(t, &ResultPolicy{NoSpill: true, StreamKeep: 64 << 10}, rpContext("", "c", harness.ReadOnly, nil), "shell", "call_2", in)
	text := rpModelText(out)
	if len(text) > DefaultMaxBytes || !strings.Contains(text, "not kept anywhere") || !strings.Contains(text, "FAIL: TestVerdict") {
		t.Fatalf("copy %d bytes:\n%s", len(text), text[len(text)-2000:])
	}
	lost, _ := out.Meta["stream_lost_bytes"].(int64)
	rec := out.Parts[0].Text
	if lost <= 0 || !strings.HasPrefix(rec, long[:64<<10]) || !strings.HasSuffix(rec, long[len(long)-DefaultMaxBytes:]) {
		t.Fatalf("record of a lost stream: lost %d, %d bytes", lost, len(rec))
	}
	if int64(len(long))-lost != int64(64<<10+DefaultMaxBytes) || out.Bytes != len(long) {
		t.Fatalf("lost %d of %d", lost, len(long))
	}
}

func TestResultPolicyStreamFailsMidway(t *testing.T) {
	ws := t.TempDir()
	log := rpLog(200 << 10)
	s := &rpStream{r: strings.NewReader(log), failAt: 150 << 10}
	out := rpCall(t, nil, rpContext(ws, "c", harness.ReadOnly, nil), "shell", "call_1", &harness.ToolResult{Stream: s})
	if !out.IsError || out.Cuts[0].Kind != harness.CutSpilled {
		t.Fatalf("error %v, cuts %+v", out.IsError, out.Cuts)
	}
	data, _ := os.ReadFile(filepath.Join(ws, out.Cuts[0].Locator))
	if string(data) != log[:150<<10] {
		t.Fatalf("spill holds %d bytes, want what the tool produced (%d)", len(data), 150<<10)
	}
	if !strings.Contains(rpModelText(out), "pipe broke") {
		t.Fatal("the stream's failure is not reported")
	}
	// A stream that fails under the ceiling keeps what it produced.
	s = &rpStream{r: strings.NewReader(log), failAt: 1000}
	out = rpCall(t, nil, rpContext(ws, "c", harness.ReadOnly, nil), "shell", "call_2", &harness.ToolResult{Stream: s})
	if !out.IsError || out.Parts[0].Text != log[:1000] || !strings.Contains(out.FullText(), "pipe broke") {
		t.Fatalf("result %+v", out.Parts)
	}
}

// rpEndless never ends and ignores everything but Close.
type rpEndless struct{ closed atomic.Bool }

func (r *rpEndless) Read(p []byte) (int, error) {
	if r.closed.Load() {
		return 0, os.ErrClosed
	}
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}
func (r *rpEndless) Close() error { r.closed.Store(true); return nil }

func TestResultPolicyStreamCancelled(t *testing.T) {
	ws := t.TempDir()
	ctx, cancel := context.WithTimeout(rpContext(ws, "c", harness.ReadOnly, nil), 200*time.Millisecond)
	defer cancel()
	s := &rpEndless{}
	fn := harness.Chain(func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
		return &harness.ToolResult{Stream: s}, nil
	}, (&ResultPolicy{}).Guard())
	_, err := fn(ctx, &harness.ToolCall{ID: "call_1", Name: "shell", Args: []byte(`{}`)})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the deadline", err)
	}
	if !s.closed.Load() {
		t.Fatal("stream left open")
	}
	if files := rpSpillFiles(t, ws); len(files) != 0 {
		t.Fatalf("partial spill left: %v", files)
	}
}

func TestResultPolicyStreamAsSpillPage(t *testing.T) {
	ws := t.TempDir()
	in, _ := rpStreamResult(rpLog(100 << 10))
	in.Meta = map[string]any{"path": ".harness/spill/c/call_1-shell.txt"}
	out := rpCall(t, nil, rpContext(ws, "c", harness.ReadOnly, nil), "read_file", "call_2", in)
	if len(out.Cuts) != 1 || out.Cuts[0].Kind != harness.CutTruncated || !strings.Contains(rpModelText(out), "not saved again") {
		t.Fatalf("cuts %+v", out.Cuts)
	}
	if files := rpSpillFiles(t, ws); len(files) != 0 {
		t.Fatalf("spilled again: %v", files)
	}
}

func TestTailRing(t *testing.T) {
	for _, writes := range [][]string{
		{"abc"}, {"abcdefghij"}, {"abcdefghijklmnop"}, {"abc", "defg", "hijkl", "m"}, {"abcdefgh", "ij", "k"}, {},
	} {
		r := &tailRing{buf: make([]byte, 10)}
		all := ""
		for _, w := range writes {
			r.write([]byte(w))
			all += w
		}
		want := all[max(0, len(all)-10):]
		if got := string(r.bytes()); got != want {
			t.Fatalf("writes %q: ring %q, want %q", writes, got, want)
		}
		// Writing after reading goes on correctly.
		r.write([]byte("XYZ"))
		all += "XYZ"
		if got, want := string(r.bytes()), all[max(0, len(all)-10):]; got != want {
			t.Fatalf("writes %q+XYZ: ring %q, want %q", writes, got, want)
		}
	}
}
