package guard

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentharness/harness"
)

// BenchmarkResultPolicy measures the guard at ceilings of 1 KiB, 24 KiB
// and 1 MiB on a result that fits (half the ceiling), one that is spilled
// (four times the ceiling, written to a real spill directory) and one that
// is truncated (spill off).
func BenchmarkResultPolicy(b *testing.B) {
	for _, limit := range []int{1 << 10, 24 << 10, 1 << 20} {
		for _, c := range []struct {
			name    string
			size    int
			noSpill bool
		}{{"fits", limit / 2, false}, {"spill", 4 * limit, false}, {"truncate", 4 * limit, true}} {
			for _, pv := range []struct {
				name string
				p    Preview
			}{{"relevant", Relevant{}}, {"headtail", HeadTail{}}} {
				if c.name == "fits" && pv.name != "relevant" {
					continue // no preview is made
				}
				benchResultPolicy(b, limit, c.name, c.size, c.noSpill, pv.name, pv.p)
			}
		}
	}
}

// benchResultPolicy times one ResultPolicy on a build log of size bytes
// (the default preview and head+tail side by side, for a ratio in one run).
func benchResultPolicy(b *testing.B, limit int, name string, size int, noSpill bool, pvName string, pv Preview) {
	b.Run(fmt.Sprintf("max=%s/%s/%s", rpSizeName(limit), name, pvName), func(b *testing.B) {
		ws := b.TempDir()
		g := (&ResultPolicy{MaxBytes: limit, NoSpill: noSpill, Preview: pv}).Guard()
		payload := rpLog(size)
		ctx := rpContext(ws, "c", harness.ReadOnly, nil)
		fn := harness.Chain(func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
			return harness.TextResult(payload), nil
		}, g)
		call := &harness.ToolCall{ID: "call_1", Name: "shell", Args: []byte(`{}`)}
		b.SetBytes(int64(len(payload)))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := fn(ctx, call); err != nil {
				b.Fatal(err)
			}
			if i++; name == "spill" && i%64 == 0 {
				b.StopTimer()
				_ = os.RemoveAll(filepath.Join(ws, ".harness"))
				b.StartTimer()
			}
		}
	})
}

func rpSizeName(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// rpLogStream produces n bytes of build-log lines without allocating.
type rpLogStream struct {
	block []byte
	left  int64
	off   int
}

func newRPLogStream(n int64) *rpLogStream {
	var sb strings.Builder
	for i := 0; sb.Len() < 64<<10; i++ {
		fmt.Fprintf(&sb, "step %06d: compiling package number %d ok\n", i, i)
	}
	return &rpLogStream{block: []byte(sb.String()), left: n}
}

func (s *rpLogStream) Read(p []byte) (int, error) {
	if s.left <= 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && s.left > 0 {
		k := copy(p[n:min(len(p), n+int(min(s.left, int64(len(p)))))], s.block[s.off:])
		n += k
		s.left -= int64(k)
		s.off = (s.off + k) % len(s.block)
	}
	return n, nil
}

func (s *rpLogStream) Close() error { return nil }

// rpPeakHeap samples the live heap while f runs and returns the largest
// value seen above the heap in use when it started.
func rpPeakHeap(f func()) (peak, base uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base = ms.HeapAlloc
	var top atomic.Uint64
	top.Store(base)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-t.C:
				runtime.ReadMemStats(&ms)
				if ms.HeapAlloc > top.Load() {
					top.Store(ms.HeapAlloc)
				}
			}
		}
	})
	f()
	close(done)
	wg.Wait()
	runtime.ReadMemStats(&ms)
	return max(top.Load(), ms.HeapAlloc), base
}

// BenchmarkStreamSpill1GiB streams 1 GiB of tool output through the guard
// (default 24 KiB ceiling) into a real spill file and reports the peak live
// heap above the starting heap, sampled every 2 ms. Run it with
//
//	go test -run XXX -bench StreamSpill1GiB -benchtime 1x ./guard/
func BenchmarkStreamSpill1GiB(b *testing.B) {
	const size = 1 << 30
	for _, limit := range []int{24 << 10, 1 << 20} {
		b.Run("max="+rpSizeName(limit), func(b *testing.B) {
			ws := b.TempDir()
			g := (&ResultPolicy{MaxBytes: limit}).Guard()
			b.SetBytes(size)
			var worst uint64
			i := 0
			for b.Loop() {
				i++
				ctx := rpContext(ws, "c", harness.ReadOnly, nil)
				var out *harness.ToolResult
				in := &harness.ToolResult{Stream: newRPLogStream(size)}
				peak, base := rpPeakHeap(func() {
					out = rpCallWith(b, g, ctx, "shell", fmt.Sprint("call_", i), `{}`, in)
				})
				if out.Bytes != size || len(out.Cuts) != 1 || out.Cuts[0].Kind != harness.CutSpilled {
					b.Fatalf("bytes %d, cuts %+v", out.Bytes, out.Cuts)
				}
				fi, err := os.Stat(filepath.Join(ws, out.Cuts[0].Locator))
				if err != nil || fi.Size() != size {
					b.Fatalf("spill file: %v", err)
				}
				worst = max(worst, peak-base)
				b.StopTimer()
				_ = os.Remove(filepath.Join(ws, out.Cuts[0].Locator))
				b.StartTimer()
			}
			b.ReportMetric(float64(worst), "peak-heap-B")
			b.ReportMetric(float64(worst)/float64(limit), "peak-heap/MaxBytes")
		})
	}
}
