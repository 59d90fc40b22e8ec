package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentharness/harness/internal/cputime"
	"github.com/agentharness/harness/internal/wiretest"
)

// TestConcurrentStreams runs 50 conversations at once, each three
// streamed rounds of 200 text deltas (the second and third carrying a
// 100 KB tool result), and checks that every client receives every event
// of its own stream, in order: 0 dropped, 0 reordered. No time limit.
func TestConcurrentStreams(t *testing.T) {
	const convs, deltas = 50, 200
	wc := wireCases[0]
	r := newRig(t, nil)
	r.up.Respond = func(req wiretest.Request) wiretest.Reply {
		var body struct {
			Messages []json.RawMessage `json:"messages"`
		}
		_ = json.Unmarshal(req.Body, &body)
		var first struct {
			Content []struct{ Text string } `json:"content"`
		}
		_ = json.Unmarshal(body.Messages[0], &first)
		tag := fmt.Sprintf("%s/r%d", first.Content[0].Text, len(body.Messages))
		evs := []wiretest.Event{{Event: "message_start", Data: `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}`},
			{Event: "content_block_start", Data: `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`}}
		for i := range deltas {
			evs = append(evs, wiretest.Event{Event: "content_block_delta", Data: fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"%s#%04d "}}`, tag, i)})
		}
		// The answer ends with the call the client's next request carries
		// (an answer without calls would end the turn, and a history going
		// on with a call there would be a fork).
		call := fmt.Sprintf(`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"call_%d","name":"Bash","input":{}}}`, (len(body.Messages)-1)/2)
		evs = append(evs, wiretest.Event{Event: "content_block_stop", Data: `{"type":"content_block_stop","index":0}`},
			wiretest.Event{Event: "content_block_start", Data: call},
			wiretest.Event{Event: "content_block_stop", Data: `{"type":"content_block_stop","index":1}`},
			wiretest.Event{Event: "message_delta", Data: `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":200}}`},
			wiretest.Event{Event: "message_stop", Data: `{"type":"message_stop"}`})
		return wiretest.Stream(evs...)
	}
	result := lockFile(100 << 10)
	var wg sync.WaitGroup
	errs := make(chan error, convs*3)
	for c := range convs {
		wg.Go(func() {
			prompt := fmt.Sprintf("conv-%02d", c)
			var steps []step
			for round := range 3 {
				body := wc.body("m", prompt, steps)
				if err := readStream(r.srv.URL+wc.path, body, fmt.Sprintf("%s/r%d", prompt, 1+2*len(steps)), deltas); err != nil {
					errs <- fmt.Errorf("%s round %d: %w", prompt, round+1, err)
					return
				}
				steps = append(steps, step{id: fmt.Sprintf("call_%d", round), tool: "Bash", args: `{}`, result: result})
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := r.px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := r.px.Stats(); s.Requests != convs*3 || s.CacheBreaks != 0 || s.Conversations != convs {
		t.Errorf("stats %+v", s)
	}
}

// readStream posts body and checks the stream carries deltas text deltas
// tagged tag, numbered in order, between message_start and message_stop.
func readStream(url string, body []byte, tag string, deltas int) error {
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	next := 0
	var names []string
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			names = append(names, name)
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || !strings.Contains(data, "text_delta") {
			continue
		}
		want := fmt.Sprintf("%s#%04d ", tag, next)
		if !strings.Contains(data, `"`+want+`"`) {
			return fmt.Errorf("event %d: got %s, want text %q", next, data, want)
		}
		next++
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if next != deltas || len(names) == 0 || names[0] != "message_start" || names[len(names)-1] != "message_stop" {
		return fmt.Errorf("got %d of %d deltas, events %d (first %v)", next, deltas, len(names), names[:min(1, len(names))])
	}
	return nil
}

// BenchmarkAddedLatency measures what the proxy adds to one model call
// carrying a history of N messages (half of them tool results of about
// 1 KB, one of 100 KB) with one new result to decide: reading, parsing,
// looking up every earlier decision, deciding the new result, splicing,
// and relaying a short streamed answer from an in-process upstream.
//
//	go test -run XXX -bench AddedLatency -benchtime 200x ./proxy/
func BenchmarkAddedLatency(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			wc := wireCases[0]
			// The answer is the call the next request carries (an answer
			// without calls would end the turn, and the history going on
			// would be a fork).
			answer := wiretest.AnthropicStream("m", "", []wiretest.Call{{ID: "new", Name: "Bash", Args: `{}`}}, wiretest.Usage{Input: 10, Output: 1})
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
			px, err := New(&Options{Upstream: "http://127.0.0.1:1", Workspace: b.TempDir(), Client: client})
			if err != nil {
				b.Fatal(err)
			}
			defer px.Close()
			steps := make([]step, 0, n/2)
			for i := range n/2 - 1 {
				res := strings.Repeat(fmt.Sprintf("output line %d of call %d\n", i, i), 40)
				if i == 1 {
					res = lockFile(100 << 10)
				}
				steps = append(steps, step{id: fmt.Sprintf("call_%d", i), tool: "Bash", args: `{"command":"ls"}`, result: res})
			}
			// Warm: every earlier result decided once, and the buffers a
			// request reuses in use, as in a live run (a proxy's first
			// requests fill its body pool: bodybuf.go).
			serve(b, px, wc.path, wc.body("m", "bench", steps))
			body := func(i int) []byte {
				// One call whose output differs each time: a new result to
				// decide, in the same round (another call id there would
				// make each request a fork of the conversation).
				last := step{id: "new", tool: "Bash", args: `{}`, result: fmt.Sprintf("fresh output %d\n", i)}
				return wc.body("m", "bench", append(steps[:len(steps):len(steps)], last))
			}
			for i := range warmRequests {
				serve(b, px, wc.path, body(-1-i))
			}
			if err := px.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			bodies := make([][]byte, b.N)
			for i := range bodies {
				bodies[i] = body(i)
			}
			b.SetBytes(int64(len(bodies[0])))
			b.ReportAllocs()
			b.ResetTimer()
			// CPU per request, GC included: on a shared machine the wall
			// time measures the neighbours too. Each request's own CPU
			// time gives the percentiles.
			per := make([]time.Duration, b.N)
			cpu := cputime.Process()
			for i := range b.N {
				start := cputime.Process()
				serve(b, px, wc.path, bodies[i])
				per[i] = cputime.Process() - start
			}
			b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
			slices.Sort(per)
			b.ReportMetric(percentile(per, 50).Seconds()*1e3, "p50-cpu-ms")
			b.ReportMetric(percentile(per, 99).Seconds()*1e3, "p99-cpu-ms")
		})
	}
}

// warmRequests is how many requests like the measured ones
// BenchmarkAddedLatency sends before measuring.
const warmRequests = 4

// percentile is the p-th percentile (nearest rank) of sorted durations.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

func serve(b testing.TB, h http.Handler, path string, body []byte) {
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != 200 {
		b.Fatalf("status %d: %s", w.Code, w.Body.String())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
