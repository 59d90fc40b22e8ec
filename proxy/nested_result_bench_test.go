package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
)

// nestedResult is a tool result of about n bytes of JSON: "nested" is
// `{"a":` repeated n/6 times (its pretty-printed form grows with the
// square of the depth; 60,000 bytes is 9,999 deep, just within
// encoding/json's nesting limit), "flat" an array of small objects of the
// same size.
func nestedResult(shape string, n int) string {
	if shape == "nested" {
		d := n / 6
		return strings.Repeat(`{"a":`, d) + "1" + strings.Repeat("}", d)
	}
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; b.Len() < n-40; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"pkg-%05d","version":"1.%d.0"}`, i, i%10)
	}
	b.WriteByte(']')
	return b.String()
}

// nestedRig is a proxy whose upstream answers every request at once with
// a short streamed Anthropic answer, in process.
func nestedRig(tb testing.TB) (*Proxy, string) {
	answer := wiretest.AnthropicStream("m", "ok", nil, wiretest.Usage{Input: 10, Output: 1})
	var sse bytes.Buffer
	for _, ev := range answer.Events {
		sse.WriteString(ev.Encode())
	}
	// It closes the request body, as a RoundTripper must.
	client := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		req.Body.Close()
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(bytes.NewReader(sse.Bytes()))}, nil
	})}
	ws := tb.TempDir()
	px, err := New(&Options{Upstream: "http://127.0.0.1:1", Workspace: ws, Client: client})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { px.Close() })
	return px, ws
}

// nestedBody is request i of the nested-result case: a conversation of
// its own (the prompt names i) whose one tool result is result, so every
// request decides, spills and previews it anew.
func nestedBody(i int, result string) []byte {
	return wireCases[0].body("m", fmt.Sprintf("request %d", i), []step{{id: "call_1", tool: "Bash", args: `{"command":"cat x.json"}`, result: result}})
}

// dirBytes is the size of the files under dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// BenchmarkNestedResult measures one request through the proxy carrying a
// JSON tool result, nested (9,999 deep at 60 KB) or flat, read, decided
// (spilled and previewed under the default 24 KiB ceiling) and relayed:
// B/op, spill-B/op and alloc/body (bytes allocated per byte of request
// body) of the two shapes side by side, a ratio in one run.
//
//	go test -run XXX -bench NestedResult -benchmem ./proxy/
func BenchmarkNestedResult(b *testing.B) {
	for _, size := range []int{60_000, 8 << 20} {
		for _, shape := range []string{"flat", "nested"} {
			b.Run(fmt.Sprintf("size=%d/shape=%s", size, shape), func(b *testing.B) {
				px, ws := nestedRig(b)
				result := nestedResult(shape, size)
				bodies := make([][]byte, b.N)
				for i := range bodies {
					bodies[i] = nestedBody(i, result)
				}
				b.SetBytes(int64(len(result)))
				b.ReportAllocs()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				b.ResetTimer()
				for i := range b.N {
					serve(b, px, wireCases[0].path, bodies[i])
				}
				b.StopTimer()
				runtime.ReadMemStats(&m1)
				b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/float64(b.N)/float64(len(bodies[0])), "alloc/body")
				b.ReportMetric(float64(dirBytes(filepath.Join(ws, ".harness")))/float64(b.N), "spill-B/op")
			})
		}
	}
}

// TestNestedResultCostsLikeAFlatOne: through the proxy, a deeply nested
// JSON result costs about what a flat one of the same size costs, in
// memory allocated and in spill file, and its spill file is at most four
// times the result.
func TestNestedResultCostsLikeAFlatOne(t *testing.T) {
	const size = 60_000
	cost := map[string][2]int64{}
	for _, shape := range []string{"flat", "nested"} {
		px, ws := nestedRig(t)
		result := nestedResult(shape, size)
		serve(t, px, wireCases[0].path, nestedBody(-1, result)) // warm
		// The counts are the process's: the warm request's work off the
		// request path (its saving counted, its round recorded) ends
		// before, and the measured one's is in.
		if err := px.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		body := nestedBody(0, result)
		before := dirBytes(ws)
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		serve(t, px, wireCases[0].path, body)
		if err := px.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&m1)
		cost[shape] = [2]int64{int64(m1.TotalAlloc - m0.TotalAlloc), dirBytes(ws) - before}
		if spilled := cost[shape][1]; spilled <= 0 || spilled > 4*int64(len(result)) {
			t.Errorf("%s: spilled %d bytes for a %d-byte result", shape, spilled, len(result))
		}
	}
	flat, nested := cost["flat"], cost["nested"]
	t.Logf("allocated: flat %d, nested %d bytes; spilled: flat %d, nested %d bytes", flat[0], nested[0], flat[1], nested[1])
	if nested[0] > 3*flat[0]+1<<20 {
		t.Errorf("the nested result allocated %d bytes, the flat one %d", nested[0], flat[0])
	}
}
