package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/internal/wiretest"
)

// spillPathRE finds the absolute spill path a marker names.
var spillPathRE = regexp.MustCompile(`(/[^\s"]*\.harness/spill/[^\s"]+\.(?:txt|json))`)

// TestDecidesOnce plays, in every wire format, "read the lock file with
// the shell" then "answer": the lock file reaches the upstream within the
// ceiling, marked, with a spill file holding every byte; the next request
// carries byte-identical earlier results; every other byte of each request
// is the client's; the store holds the full result.
func TestDecidesOnce(t *testing.T) {
	lock := lockFile(300 << 10)
	for _, wc := range wireCases {
		t.Run(wc.name, func(t *testing.T) {
			r := newRig(t, nil)
			const model = "test-model"
			prompt := "Which version of zod does the lock file pin?"
			read := step{id: "call_1", tool: "shell", args: `{"command":"cat package-lock.json"}`, result: lock}
			small := step{id: "call_2", tool: "shell", args: `{"command":"grep -c zod package-lock.json"}`, result: "1\n"}
			u := wiretest.Usage{Input: 1000, Cached: 800, Output: 20}
			r.up.Enqueue(
				wc.reply(model, "", []wiretest.Call{{ID: read.id, Name: read.tool, Args: read.args}}, u),
				wc.reply(model, "", []wiretest.Call{{ID: small.id, Name: small.tool, Args: small.args}}, u),
				wc.reply(model, "zod is pinned at 1.10.0.", nil, u),
			)
			bodies := [][]byte{
				wc.body(model, prompt, nil),
				wc.body(model, prompt, []step{read}),
				wc.body(model, prompt, []step{read, small}),
			}
			for i, b := range bodies {
				status, _, got := r.post(wc.path, b, nil)
				if status != 200 {
					t.Fatalf("request %d: status %d: %s", i+1, status, got)
				}
			}
			reqs := r.up.Requests()
			if len(reqs) != 3 {
				t.Fatalf("upstream got %d requests, want 3", len(reqs))
			}
			if !bytes.Equal(reqs[0].Body, bodies[0]) {
				t.Errorf("a request with no tool result was changed")
			}
			// Request 2: the lock file, cut, marked, spilled.
			c2 := contents(t, wc.format, reqs[1].Body)
			var shown string
			if err := json.Unmarshal([]byte(c2[0]), &shown); err != nil {
				t.Fatalf("the replaced content is not a JSON string: %v", err)
			}
			if len(shown) > guard.DefaultMaxBytes {
				t.Errorf("the model copy is %d bytes, over the %d ceiling", len(shown), guard.DefaultMaxBytes)
			}
			if !strings.Contains(shown, "[harness:") {
				t.Errorf("the model copy carries no marker:\n%.400s", shown)
			}
			m := spillPathRE.FindStringSubmatch(shown)
			if m == nil {
				t.Fatalf("the marker names no spill path:\n%s", shown[len(shown)-min(len(shown), 800):])
			}
			spilled, err := os.ReadFile(m[1])
			if err != nil || string(spilled) != lock {
				t.Fatalf("the spill file %s holds %d bytes (err %v), want the %d of the lock file", m[1], len(spilled), err, len(lock))
			}
			sameOutside(t, wc.format, bodies[1], reqs[1].Body)
			// Request 3: the earlier result byte-identical, the small one as sent.
			c3 := contents(t, wc.format, reqs[2].Body)
			if c3[0] != c2[0] {
				t.Errorf("the lock file's model copy changed between requests")
			}
			if c3[1] != mustJSON(small.result) {
				t.Errorf("a result under the ceiling was changed: %s", c3[1])
			}
			sameOutside(t, wc.format, bodies[2], reqs[2].Body)
			e2, e3 := elements(t, wc.format, reqs[1].Body), elements(t, wc.format, reqs[2].Body)
			for i := range e2 {
				if e2[i] != e3[i] {
					t.Errorf("history element %d differs between requests 2 and 3 (cache break)", i)
				}
			}
			if err := r.px.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			st := r.px.Stats()
			if st.CacheBreaks != 0 || st.ResultsDecided != 2 || st.ResultsCut != 1 || st.ResultsReused != 1 || st.Requests != 3 {
				t.Errorf("stats %+v", st)
			}
			if st.Upstream.Input != 3000 || st.Upstream.Cached != 2400 || st.Upstream.Output != 60 {
				t.Errorf("upstream usage %+v, want 3000/2400/60", st.Upstream)
			}
			if st.BytesRemoved < int64(len(lock))-int64(guard.DefaultMaxBytes)*2 {
				t.Errorf("bytes removed %d", st.BytesRemoved)
			}
			checkStored(t, r, lock)
		})
	}
}

// sameOutside checks that sent equals client outside the replaced
// contents: same bytes before, between and after them.
func sameOutside(t *testing.T, f wireFormat, client, sent []byte) {
	t.Helper()
	rc, err := walkBody(client, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := walkBody(sent, f, nil)
	if err != nil {
		t.Fatalf("the proxy sent a body its own format cannot read: %v", err)
	}
	var cs, ss []span
	for _, it := range rc.Items {
		if it.Result != nil {
			cs = append(cs, it.Result.Content)
		}
	}
	for _, it := range rs.Items {
		if it.Result != nil {
			ss = append(ss, it.Result.Content)
		}
	}
	if len(cs) != len(ss) {
		t.Fatalf("%d results sent, %d received", len(ss), len(cs))
	}
	ca, sa := 0, 0
	for i := range cs {
		if !bytes.Equal(client[ca:cs[i].Start], sent[sa:ss[i].Start]) {
			t.Fatalf("bytes before result %d differ", i)
		}
		ca, sa = cs[i].End, ss[i].End
	}
	if !bytes.Equal(client[ca:], sent[sa:]) {
		t.Fatalf("bytes after the last result differ")
	}
}

// checkStored checks the store after a TestDecidesOnce run: one turn of
// three rounds, answered, the lock file's full payload and its cut.
func checkStored(t *testing.T, r *rig, lock string) {
	t.Helper()
	if err := r.px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	list, err := r.st.List(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("store lists %d conversations (err %v), want 1", len(list), err)
	}
	conv, err := r.st.Load(context.Background(), list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(conv.Turns) != 1 || len(conv.Turns[0].Rounds) != 3 {
		t.Fatalf("stored %d turns, rounds %v", len(conv.Turns), roundsOf(conv))
	}
	turn := conv.Turns[0]
	if turn.Outcome != harness.Answered || turn.Answer() != "zod is pinned at 1.10.0." {
		t.Errorf("turn outcome %q answer %q", turn.Outcome, turn.Answer())
	}
	if !strings.Contains(turn.Input, "zod") {
		t.Errorf("turn input %q", turn.Input)
	}
	if turn.Usage.Input != 3000 {
		t.Errorf("turn usage %+v", turn.Usage)
	}
	res := turn.Rounds[0].Results
	if len(res) != 1 || len(res[0].Cuts) == 0 {
		t.Fatalf("round 1 results %+v", res)
	}
	full, err := r.st.FullResult(context.Background(), conv.ID, "call_1")
	if err != nil || full.FullText() != lock {
		t.Fatalf("stored full result: %d bytes, err %v", len(full.FullText()), err)
	}
}

func roundsOf(conv *harness.Conversation) []int {
	var out []int
	for _, t := range conv.Turns {
		out = append(out, len(t.Rounds))
	}
	return out
}

func TestLogLine(t *testing.T) {
	wc := wireCases[0]
	r := newRig(t, nil)
	r.up.Enqueue(wc.reply("m", "hi", nil, wiretest.Usage{Input: 5, Output: 1}))
	r.post(wc.path, wc.body("m", "hello", nil), map[string]string{"X-Api-Key": "sk-secret-123"})
	t.Log(r.log.String())
}
