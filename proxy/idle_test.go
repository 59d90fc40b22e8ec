package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/store"
)

// fakeClock is the proxy's clock in tests: it moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// idleWord is a word of the notes result that the agent quotes in a later
// call, which puts that result in the working set.
const idleWord = "zebraquux42"

// idleSteps are eight tool rounds: a lock file over the ceiling (spilled
// on arrival), a notes file whose word the seventh call quotes, and six
// small results. Nothing but the seventh call names a word of any result.
func idleSteps() []step {
	filler := func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < 2000; i++ {
			fmt.Fprintf(&b, "alpha beta gamma delta epsilon row%c%c of part%c\n", 'a'+rune(n), 'a'+rune(i%26), 'a'+rune(i/26))
		}
		return b.String()
	}
	steps := []step{
		{id: "call_1", tool: "shell", args: `{"command":"cat package-lock.json"}`, result: lockFile(60 << 10)},
		{id: "call_2", tool: "shell", args: `{"command":"cat notes.txt"}`, result: filler(1) + "the key is " + idleWord + "\n" + filler(2)},
	}
	for i := 3; i <= 8; i++ {
		args := fmt.Sprintf(`{"command":"cat file%d.txt"}`, i)
		if i == 7 {
			args = `{"command":"grep -n ` + idleWord + ` notes.txt"}`
		}
		steps = append(steps, step{id: fmt.Sprintf("call_%d", i), tool: "shell", args: args, result: filler(i)})
	}
	return steps
}

// idleRun is one scripted conversation through a proxy on a fake clock:
// every request's body as the client sent it and as the upstream got it.
type idleRun struct {
	t     *testing.T
	wc    wireCase
	r     *rig
	clock *fakeClock
	steps []step
	mod   func([]byte) []byte
	sent  [][]byte
	opts  Options // the proxy's options, which a restart keeps
}

func newIdleRun(t *testing.T, wc wireCase, opts *Options, mod func([]byte) []byte) *idleRun {
	clock := newFakeClock()
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.Now = clock.now
	if mod == nil {
		mod = func(b []byte) []byte { return b }
	}
	steps := idleSteps()
	steps = append(steps, step{id: "call_9", tool: "shell", args: `{"command":"cat file9.txt"}`, result: "nine\n"},
		step{id: "call_10", tool: "shell", args: `{"command":"cat file10.txt"}`, result: "ten\n"},
		step{id: "call_11", tool: "shell", args: `{"command":"cat file11.txt"}`, result: "eleven\n"})
	return &idleRun{t: t, wc: wc, r: newRig(t, &o), clock: clock, steps: steps, mod: mod, opts: o}
}

// send sends the request carrying the first n results, after a pause,
// and returns what the upstream got.
func (x *idleRun) send(n int, pause time.Duration) []byte {
	x.t.Helper()
	x.clock.advance(pause)
	next := x.steps[n]
	x.r.up.Enqueue(x.wc.reply("test-model", "", []wiretest.Call{{ID: next.id, Name: next.tool, Args: next.args}}, wiretest.Usage{Input: 100, Output: 10}))
	body := x.mod(x.wc.body("test-model", "Find the key.", x.steps[:n]))
	x.sent = append(x.sent, body)
	if status, _, got := x.r.post(x.wc.path, body, nil); status != 200 {
		x.t.Fatalf("request with %d results: status %d: %s", n, status, got)
	}
	reqs := x.r.up.Requests()
	return reqs[len(reqs)-1].Body
}

// restart starts a second proxy on the same store and workspace (as a
// restarted process would be) and sends the next requests to it.
func (x *idleRun) restart() *Proxy {
	x.t.Helper()
	return x.restartOn(x.r.st)
}

// restartOn is restart with the second proxy on st.
func (x *idleRun) restartOn(st store.Store) *Proxy {
	x.t.Helper()
	o := x.opts
	o.Upstream, o.Store, o.Workspace, o.Now = x.r.up.URL, st, x.r.ws, x.clock.now
	px, err := New(&o)
	if err != nil {
		x.t.Fatal(err)
	}
	x.r.srv = httptest.NewServer(px)
	x.t.Cleanup(x.r.srv.Close)
	return px
}

// warmUp sends the requests with 0 to 7 results, 10 seconds apart.
func (x *idleRun) warmUp() {
	for n := 0; n < 8; n++ {
		x.send(n, 10*time.Second)
	}
}

// shownResults decodes the results a forwarded body shows.
func (x *idleRun) shownResults(body []byte) []string {
	x.t.Helper()
	var out []string
	for _, c := range contents(x.t, x.wc.format, body) {
		var s string
		if err := json.Unmarshal([]byte(c), &s); err != nil {
			x.t.Fatalf("a result's content is not a JSON string: %.80s", c)
		}
		out = append(out, s)
	}
	return out
}

var idlePathRE = regexp.MustCompile(`The whole result is in (\S+)\. `)

// TestIdleClearAnthropic: after 8 rounds and a 6-minute pause (longer than
// the Messages API's 5-minute cache) the old results outside the newest 4
// rounds become one-line placeholders naming a file with the whole result,
// the quoted one and the newest 4 rounds stay as they were, every other
// byte is the client's, and the next request carries the same bytes; a
// restarted proxy sends them too.
func TestIdleClearAnthropic(t *testing.T) {
	x := newIdleRun(t, wireCases[0], nil, nil)
	x.warmUp()
	before := x.shownResults(x.r.up.Requests()[7].Body)
	got := x.send(8, 6*time.Minute)
	shown := x.shownResults(got)
	if len(shown) != 8 {
		t.Fatalf("%d results forwarded, want 8", len(shown))
	}
	for i, s := range shown {
		cleared := i == 0 || i == 2 || i == 3 // rounds 1, 3, 4; round 2 is quoted
		switch {
		case !cleared && i < len(before) && s != before[i]:
			t.Errorf("result %d changed although kept:\n%.200s", i+1, s)
		case !cleared && i == 7 && s != x.steps[7].result:
			t.Errorf("the newest result was not sent as it came")
		case cleared:
			checkPlaceholder(t, s, x.steps[i])
		}
	}
	sameOutside(t, x.wc.format, x.sent[8], got)
	st := x.r.px.Stats()
	t.Logf("after 6 min idle: %d bytes sent by the client, %d forwarded (%d the request before, with 7 results); %d results cleared, %d bytes",
		len(x.sent[8]), len(got), len(x.r.up.Requests()[7].Body), st.IdleClearedResults, st.IdleClearedBytes)
	if st.IdleClears != 1 || st.IdleClearedResults != 3 || st.CacheBreaks != 1 {
		t.Errorf("stats: %d idle clears of %d results, %d cache breaks; want 1, 3, 1", st.IdleClears, st.IdleClearedResults, st.CacheBreaks)
	}
	var removed int64
	for _, i := range []int{0, 2, 3} {
		removed += int64(len(mustJSON(before[i])) - len(mustJSON(shown[i])))
	}
	if st.IdleClearedBytes != removed {
		t.Errorf("idle_cleared_bytes %d, want %d (the content bytes the clear removed)", st.IdleClearedBytes, removed)
	}
	cs := st.ByConversation
	if len(cs) != 1 {
		t.Fatalf("%d conversations in the stats", len(cs))
	}
	for _, c := range cs {
		if c.IdleClears != 1 || c.IdleClearedResults != 3 || c.IdleClearedBytes != removed || c.CacheBreaks != 1 {
			t.Errorf("per conversation: %+v", c)
		}
	}

	// A minute later: the same bytes for every earlier result, no new break.
	next := x.shownResults(x.send(9, time.Minute))
	for i := range shown {
		if next[i] != shown[i] {
			t.Errorf("result %d changed in the next request", i+1)
		}
	}
	if st := x.r.px.Stats(); st.CacheBreaks != 1 || st.IdleClears != 1 {
		t.Errorf("after the next request: %d cache breaks, %d idle clears; want 1, 1", st.CacheBreaks, st.IdleClears)
	}

	// A proxy started on the same store (a restart) sends the same bytes.
	if err := x.r.px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkStoredClears(t, x, shown)
	px2 := x.restart()
	again := x.shownResults(x.send(10, 30*time.Second))
	for i := range next {
		if again[i] != next[i] {
			t.Errorf("after a restart, result %d is sent otherwise:\n%.200s", i+1, again[i])
		}
	}
	if err := px2.Close(); err != nil {
		t.Error(err)
	}
}

// checkPlaceholder checks that s is the one-line placeholder of st's
// result, naming a file that holds the whole result.
func checkPlaceholder(t *testing.T, s string, st step) {
	t.Helper()
	if !strings.HasPrefix(s, "[harness proxy: cleared after an idle pause") || strings.Contains(s, "\n") || !strings.Contains(s, st.id) {
		t.Errorf("result of %s: not a one-line placeholder:\n%.300s", st.id, s)
		return
	}
	m := idlePathRE.FindStringSubmatch(s)
	if m == nil {
		t.Errorf("result of %s: the placeholder names no file: %s", st.id, s)
		return
	}
	whole, err := os.ReadFile(m[1])
	if err != nil || string(whole) != st.result {
		t.Errorf("result of %s: %s holds %d bytes (%v), want the %d of the result", st.id, m[1], len(whole), err, len(st.result))
	}
}

// TestIdleClearWhen: whether a pause clears, by wire format, by what the
// request says of its cache and by the option.
func TestIdleClearWhen(t *testing.T) {
	ttl1h := func(b []byte) []byte {
		return bytes.Replace(b, []byte(`"cache_control":{"type":"ephemeral"}`), []byte(`"cache_control":{"type":"ephemeral","ttl":"1h"}`), 1)
	}
	retain := func(b []byte) []byte { return append([]byte(`{"prompt_cache_retention":"24h",`), b[1:]...) }
	byName := map[string]wireCase{}
	for _, wc := range wireCases {
		byName[wc.name] = wc
	}
	cases := []struct {
		name, format string
		opts         *Options
		mod          func([]byte) []byte
		pause        time.Duration
		cleared      int64
	}{
		{"anthropic at 4 min", "anthropic", nil, nil, 4 * time.Minute, 0},
		{"anthropic at 6 min", "anthropic", nil, nil, 6 * time.Minute, 3},
		{"anthropic ttl 1h at 6 min", "anthropic", nil, ttl1h, 6 * time.Minute, 0},
		{"anthropic ttl 1h at 61 min", "anthropic", nil, ttl1h, 61 * time.Minute, 3},
		{"anthropic off at 2 h", "anthropic", &Options{NoClearWhenIdle: true}, nil, 2 * time.Hour, 0},
		{"responses at 30 min", "openai-responses", nil, nil, 30 * time.Minute, 0},
		{"responses at 61 min", "openai-responses", nil, nil, 61 * time.Minute, 3},
		{"responses retention 24h at 25 h", "openai-responses", nil, retain, 25 * time.Hour, 0},
		{"responses off at 2 h", "openai-responses", &Options{NoClearWhenIdle: true}, nil, 2 * time.Hour, 0},
		{"chat at 30 min", "openai-chat", nil, nil, 30 * time.Minute, 0},
		{"chat at 61 min", "openai-chat", nil, nil, 61 * time.Minute, 3},
		{"chat retention 24h at 25 h", "openai-chat", nil, retain, 25 * time.Hour, 0},
		{"chat 10 min set at 11 min", "openai-chat", &Options{ClearWhenIdle: 10 * time.Minute}, nil, 11 * time.Minute, 3},
		{"gemini at 25 h", "gemini", nil, nil, 25 * time.Hour, 0},
		{"gemini 10 min set at 9 min", "gemini", &Options{ClearWhenIdle: 10 * time.Minute}, nil, 9 * time.Minute, 0},
		{"gemini 10 min set at 11 min", "gemini", &Options{ClearWhenIdle: 10 * time.Minute}, nil, 11 * time.Minute, 3},
		{"anthropic 2 h set at 61 min", "anthropic", &Options{ClearWhenIdle: 2 * time.Hour}, nil, 61 * time.Minute, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x := newIdleRun(t, byName[tc.format], tc.opts, tc.mod)
			x.warmUp()
			shown := x.shownResults(x.send(8, tc.pause))
			st := x.r.px.Stats()
			if st.IdleClearedResults != tc.cleared {
				t.Fatalf("%d results cleared, want %d", st.IdleClearedResults, tc.cleared)
			}
			if tc.cleared == 0 {
				if st.CacheBreaks != 0 || st.IdleClears != 0 {
					t.Errorf("%d cache breaks, %d idle clears with nothing cleared", st.CacheBreaks, st.IdleClears)
				}
				return
			}
			for _, i := range []int{0, 2, 3} {
				checkPlaceholder(t, shown[i], x.steps[i])
			}
			if shown[1] == "" || strings.HasPrefix(shown[1], "[harness proxy: cleared") {
				t.Errorf("the quoted result was cleared")
			}
			sameOutside(t, x.wc.format, x.sent[8], x.r.up.Requests()[8].Body)
		})
	}
}

// TestIdleClearNegative: a negative ClearWhenIdle is refused.
func TestIdleClearNegative(t *testing.T) {
	if _, err := New(&Options{Upstream: "http://127.0.0.1:1", ClearWhenIdle: -time.Minute}); err == nil || !strings.Contains(err.Error(), "NoClearWhenIdle") {
		t.Errorf("New with a negative ClearWhenIdle: %v", err)
	}
}

// TestIdleClearAfterRestart: a proxy that did not relay the last answer
// (restarted, or one that forgot the conversation) measures the pause
// from the end of the last answered turn in the store, so a new turn
// after 6 minutes clears as it would have.
func TestIdleClearAfterRestart(t *testing.T) {
	x := newIdleRun(t, wireCases[0], nil, nil)
	x.warmUp()
	x.clock.advance(10 * time.Second)
	x.r.up.Enqueue(x.wc.reply("test-model", "The key is "+idleWord+".", nil, wiretest.Usage{Input: 100, Output: 10}))
	first := x.wc.body("test-model", "Find the key.", x.steps[:8])
	if status, _, got := x.r.post(x.wc.path, first, nil); status != 200 {
		t.Fatalf("status %d: %s", status, got)
	}
	if err := x.r.px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := x.r.px.Stats(); st.IdleClears != 0 {
		t.Fatalf("%d idle clears before the pause", st.IdleClears)
	}
	px2 := x.restart()
	x.clock.advance(6 * time.Minute)
	x.r.up.Enqueue(x.wc.reply("test-model", "Nothing else.", nil, wiretest.Usage{Input: 100, Output: 10}))
	next := bytes.Replace(first, []byte(`],"system"`),
		[]byte(`,{"role":"assistant","content":[{"type":"text","text":"The key is `+idleWord+`."}]},{"role":"user","content":"Any other key?"}],"system"`), 1)
	if status, _, got := x.r.post(x.wc.path, next, nil); status != 200 {
		t.Fatalf("status %d: %s", status, got)
	}
	if err := px2.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := x.r.up.Requests()
	shown := x.shownResults(reqs[len(reqs)-1].Body)
	for _, i := range []int{0, 2, 3} {
		checkPlaceholder(t, shown[i], x.steps[i])
	}
	if st := px2.Stats(); st.IdleClears != 1 || st.IdleClearedResults != 3 {
		t.Errorf("after the restart: %d idle clears of %d results, want 1 of 3", st.IdleClears, st.IdleClearedResults)
	}
	if err := px2.Close(); err != nil {
		t.Error(err)
	}
}

// checkStoredClears checks the store: every result whole as the client
// sent it, and each cleared one with a view cut of the clear that names
// its placeholder and file.
func checkStoredClears(t *testing.T, x *idleRun, shown []string) {
	t.Helper()
	ctx := context.Background()
	list, err := x.r.st.List(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("store: %d conversations (%v)", len(list), err)
	}
	calls, err := x.r.st.Calls(ctx, list[0].ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	views := map[string][]store.ViewCut{}
	for _, c := range calls {
		views[c.CallID] = append(views[c.CallID], c.Views...)
	}
	for i, s := range x.steps[:8] {
		full, err := x.r.st.FullResult(ctx, list[0].ID, s.id)
		if err != nil || full.FullText() != s.result {
			t.Errorf("stored result of %s: %v, not as sent", s.id, err)
		}
		cleared := i == 0 || i == 2 || i == 3
		var got []store.ViewCut
		for _, v := range views[s.id] {
			if v.By == idleClearBy {
				got = append(got, v)
			}
		}
		switch {
		case cleared && (len(got) != 1 || got[0].Kind != harness.CutCleared || got[0].Marker != shown[i] || got[0].Locator == ""):
			t.Errorf("view cuts of %s: %+v, want one clear with the placeholder", s.id, got)
		case !cleared && len(got) != 0:
			t.Errorf("view cuts of the kept %s: %+v", s.id, got)
		}
	}
}

// TestIdleClearNeverGrows: a result the engine's rule would clear but whose
// placeholder, naming its file, is longer than the result stays as it is.
func TestIdleClearNeverGrows(t *testing.T) {
	x := newIdleRun(t, wireCases[0], nil, nil)
	x.steps[3].result = strings.Repeat("omega ", 50) // 300 bytes
	x.warmUp()
	shown := x.shownResults(x.send(8, 6*time.Minute))
	checkPlaceholder(t, shown[0], x.steps[0])
	checkPlaceholder(t, shown[2], x.steps[2])
	if shown[3] != x.steps[3].result {
		t.Errorf("the 300-byte result was replaced by %d bytes: %.120s", len(shown[3]), shown[3])
	}
	if st := x.r.px.Stats(); st.IdleClearedResults != 2 || st.IdleClearedBytes <= 0 {
		t.Errorf("%d results cleared, %d bytes; want 2, more than 0", st.IdleClearedResults, st.IdleClearedBytes)
	}
}

// TestStoredRoundsAnswered: each round the proxy stores carries when it
// relayed that round's answer, on its clock, so harness's own store read
// as a recording knows the pauses between calls (bench --cache-ttl).
func TestStoredRoundsAnswered(t *testing.T) {
	x := newIdleRun(t, wireCases[0], nil, nil)
	start := x.clock.now()
	x.warmUp()
	if err := x.r.px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	list, err := x.r.st.List(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("store: %d conversations (%v)", len(list), err)
	}
	conv, err := x.r.st.Load(context.Background(), list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	rounds := conv.Turns[len(conv.Turns)-1].Rounds
	// The answer to the request with n results came at start + (n+1)·10s;
	// it is round n+1, stored when the request with n+1 results arrived.
	if len(rounds) != 7 {
		t.Fatalf("%d rounds stored, want 7", len(rounds))
	}
	for i, r := range rounds {
		if want := start.Add(time.Duration(i+1) * 10 * time.Second); !r.Answered.Equal(want) {
			t.Errorf("round %d answered at %v, want %v", r.Index, r.Answered, want)
		}
	}
}
