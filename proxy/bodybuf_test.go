package proxy

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/stack"
)

// TestBodyBufHolds: a pooled buffer goes back once its last holder lets
// go, and a reader's hold outlasts its close while a read is under way.
func TestBodyBufHolds(t *testing.T) {
	var bp bodyPool
	for _, tc := range []struct {
		n      int
		pooled bool
	}{{0, false}, {32 << 10, false}, {32<<10 + 1, true}, {700 << 10, true}, {32 << 20, true}, {32<<20 + 1, false}} {
		bb := readN(t, &bp, tc.n)
		if len(bb.b) != tc.n || (bb.pool != nil) != tc.pooled || bb.refs.Load() != 1 {
			t.Errorf("read(%d): %d bytes, pooled %v, %d holds; want pooled %v, 1 hold", tc.n, len(bb.b), bb.pool != nil, bb.refs.Load(), tc.pooled)
		}
		if tc.pooled && cap(bb.b) < tc.n {
			t.Errorf("read(%d): capacity %d", tc.n, cap(bb.b))
		}
	}

	// A released buffer of a class is what the next body of that class
	// is read into.
	first := readN(t, &bp, 100<<10)
	first.release()
	bb := readN(t, &bp, 90<<10)
	if &bb.b[:1][0] != &first.b[:1][0] && !poisonReleased {
		t.Logf("a released 128 KiB buffer was not reused (sync.Pool may drop it)")
	}
	copy(bb.b, strings.Repeat("a", len(bb.b)))
	block, unblock := make(chan struct{}), make(chan struct{})
	h := &heldReader{r: blockingReader{block, unblock}, buf: bb.hold()}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = h.Read(make([]byte, 8))
	}()
	<-block // the read is under way
	h.Close()
	bb.release() // the request's hold
	if n := bb.refs.Load(); n != 1 {
		t.Errorf("closed while a read is under way: %d holds, want the reader's 1", n)
	}
	close(unblock)
	<-done
	if n := bb.refs.Load(); n != 0 {
		t.Errorf("after the read: %d holds, want 0", n)
	}
	if _, err := h.Read(make([]byte, 8)); err != errBodyClosed {
		t.Errorf("a read after close: %v, want errBodyClosed", err)
	}
	if poisonReleased && bytes.Contains(bb.b[:cap(bb.b)], []byte("a")) {
		t.Errorf("a released buffer is not overwritten under the race detector")
	}
}

// readN reads a body of n bytes announced by its length through bp.
func readN(t *testing.T, bp *bodyPool, n int) *bodyBuf {
	t.Helper()
	bb, err := bp.read(bytes.NewReader(make([]byte, n)), int64(n))
	if err != nil {
		t.Fatalf("read(%d): %v", n, err)
	}
	return bb
}

// blockingReader signals block when a read starts and returns once
// unblock is closed.
type blockingReader struct{ block, unblock chan struct{} }

func (r blockingReader) Read(p []byte) (int, error) {
	r.block <- struct{}{}
	<-r.unblock
	return 0, io.EOF
}

// TestArgsOwnTheirBytes: a call's arguments, which the conversation keeps
// (its mirror, the store's queue), are a copy, not a slice of the request
// body whose buffer is reused.
func TestArgsOwnTheirBytes(t *testing.T) {
	for _, wc := range wireCases {
		t.Run(wc.name, func(t *testing.T) {
			body := wc.body("m", "go", []step{{id: "call_1", tool: "Bash", args: `{"command":"ls"}`, result: "a\n"}})
			req, err := walkBody(body, wc.format, nil)
			if err != nil {
				t.Fatal(err)
			}
			var args []string
			for _, it := range req.Items {
				for _, c := range it.Calls {
					args = append(args, string(c.Args))
				}
			}
			for i := range body {
				body[i] = 'x'
			}
			i := 0
			for _, it := range req.Items {
				for _, c := range it.Calls {
					if string(c.Args) != args[i] {
						t.Errorf("call %s: arguments %q changed with the body (were %q)", c.ID, c.Args, args[i])
					}
					i++
				}
			}
			if i == 0 {
				t.Fatal("no call parsed")
			}
		})
	}
}

// TestPooledBodiesInterleaved: two conversations whose bodies are read
// into pooled buffers, their requests interleaved, each extending the
// last; every request reaches the upstream as the client sent it (no
// result is cut) and the store holds every result as sent. Under the race
// detector a buffer is overwritten when released, so a parse, a reader or
// a record that outlived its hold would show here.
func TestPooledBodiesInterleaved(t *testing.T) {
	wc := wireCases[0]
	r := newRig(t, &Options{Stack: &stack.Config{NoTurnBudget: true}})
	convs := []string{"first", "second"}
	steps := map[string][]step{}
	var sent [][]byte
	const rounds = 6
	for round := range rounds {
		for _, prompt := range convs {
			id := fmt.Sprintf("call_%d", round)
			r.up.Enqueue(wc.reply("m", "", []wiretest.Call{{ID: id, Name: "Bash", Args: `{}`}}, wiretest.Usage{Input: 10, Output: 1}))
			body := wc.body("m", prompt, steps[prompt])
			if status, _, got := r.post(wc.path, body, nil); status != 200 {
				t.Fatalf("%s round %d: status %d: %s", prompt, round, status, got)
			}
			sent = append(sent, body)
			result := strings.Repeat(fmt.Sprintf("%s line of round %d\n", prompt, round), 12<<10/30)
			steps[prompt] = append(steps[prompt], step{id: id, tool: "Bash", args: `{}`, result: result})
		}
	}
	reqs := r.up.Requests()
	if len(reqs) != len(sent) {
		t.Fatalf("upstream got %d requests, want %d", len(reqs), len(sent))
	}
	for i, req := range reqs {
		if !bytes.Equal(req.Body, sent[i]) {
			t.Errorf("request %d (%d bytes) reached the upstream changed (%d bytes)", i+1, len(sent[i]), len(req.Body))
		}
	}
	if err := r.px.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if s := r.px.Stats(); s.CacheBreaks != 0 || s.ResultsCut != 0 {
		t.Errorf("stats %+v", s)
	}
	ids, err := r.st.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, id := range ids {
		conv, err := r.st.Load(t.Context(), id.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, turn := range conv.Turns {
			prompt := turn.Input
			for ri, round := range turn.Rounds {
				for _, res := range round.Results {
					want := steps[prompt][ri].result
					if got := res.FullText(); got != want {
						t.Errorf("%s round %d: stored %d bytes that differ from the %d sent", prompt, ri+1, len(got), len(want))
					}
					found++
				}
			}
		}
	}
	if want := len(convs) * (rounds - 1); found != want {
		t.Errorf("the store holds %d results, want %d", found, want)
	}
}
