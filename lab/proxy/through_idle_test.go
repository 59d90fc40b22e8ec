package proxylab_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/replayengine"
	benchlab "github.com/agentharness/harness/lab/bench"
	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/proxy"
	"github.com/agentharness/harness/replay"
	"github.com/agentharness/harness/stack"
	"github.com/agentharness/harness/store/sqlite"
)

// recordedClock sits in front of a proxy replayed by bench --through and
// makes the proxy's clock follow the recordings: before serving the i-th
// request it sets the clock to the recorded time of the i-th recorded call
// (the bench replays its recordings through the proxy one after another,
// in order, one request per call), so the proxy sees the recorded pauses.
// A call without a time keeps the clock where it is. It also checks that
// each request is the one it assumes (the first user message must be the
// first input of the recording the call belongs to) and names each
// recording's conversation with proxy.ConversationHeader, as Codex's
// prompt_cache_key does: the recordings keep no Claude Code system
// prompt, and many sessions of a set open with the same first message
// ("Warmup", a local-command caveat, the same AGENTS.md), so the proxy's
// own key (model, system prompt, first user message) would run them as
// one conversation.
type recordedClock struct {
	h     http.Handler
	calls []clockCall

	mu   sync.Mutex
	now  time.Time
	next int
	errs []string
}

// clockCall is one recorded call as the clock expects it.
type clockCall struct {
	conv  string
	rec   string
	input string
	time  time.Time
}

// newRecordedClock expects the calls of recs in order; the clock starts
// at the first recorded time (or a fixed date when none is recorded).
func newRecordedClock(recs []*replay.Recording) *recordedClock {
	c := &recordedClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	started := false
	for r, rec := range recs {
		first := ""
		if len(rec.Turns) > 0 {
			// The request's first user message: the turn's first context
			// message sent before its input, else the input.
			first = rec.Turns[0].Input
			for _, cm := range rec.Turns[0].Context {
				if !cm.AfterInput {
					first = cm.Text
					break
				}
			}
		}
		for _, t := range rec.Turns {
			for _, call := range t.Calls {
				c.calls = append(c.calls, clockCall{conv: fmt.Sprintf("research-%d", r), rec: rec.Source, input: first, time: call.Time})
				if !started && !call.Time.IsZero() {
					c.now, started = call.Time, true
				}
			}
		}
	}
	return c
}

// Now is the proxy's clock.
func (c *recordedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// ServeHTTP sets the clock for the next recorded call and serves it.
func (c *recordedClock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	c.mu.Lock()
	i := c.next
	c.next++
	if i < len(c.calls) {
		r.Header.Set(proxy.ConversationHeader, c.calls[i].conv)
		if !c.calls[i].time.IsZero() {
			c.now = c.calls[i].time
		}
		if got := firstUser(body); got != c.calls[i].input {
			c.errs = append(c.errs, fmt.Sprintf("request %d (call of %s): first user message %.60q, want %.60q", i, c.calls[i].rec, got, c.calls[i].input))
		}
	}
	c.mu.Unlock()
	c.h.ServeHTTP(w, r)
}

// served returns the number of requests served and the mismatches seen.
func (c *recordedClock) served() (int, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.next, c.errs
}

// firstUser is the text of the first user message of a Chat Completions
// body (its text parts joined when the content is a list).
func firstUser(body []byte) string {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return "(unreadable)"
	}
	for _, m := range req.Messages {
		if m.Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			return s
		}
		var parts []struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(m.Content, &parts)
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

// idleConfig is one proxy configuration of the idle clear.
type idleConfig struct {
	name  string
	set   func(*proxy.Options)
	clear bool // the clear can act (it is not off)
}

var idleConfigs = []idleConfig{
	{"off", func(o *proxy.Options) { o.NoClearWhenIdle = true }, false},
	{"auto", func(o *proxy.Options) {}, true}, // Chat Completions: an hour
	{"5m", func(o *proxy.Options) { o.ClearWhenIdle = 5 * time.Minute }, true},
}

// noBudget is the proxy with neither the idle clear nor the turn budget
// on arrival (stack.Config.NoTurnBudget).
var noBudget = idleConfig{"off, no turn budget", func(o *proxy.Options) {
	o.NoClearWhenIdle, o.Stack = true, &stack.Config{NoTurnBudget: true}
}, false}

// wideBudget is the proxy without the idle clear and with a turn budget
// four times policy.DefaultTurnChars.
var wideBudget = idleConfig{"off, turn budget 96,000", func(o *proxy.Options) {
	o.NoClearWhenIdle, o.Stack = true, &stack.Config{TurnBudget: &policy.TurnBudget{Chars: 4 * policy.DefaultTurnChars}}
}, false}

// everyRoundBudget is the proxy without the idle clear whose turn budget
// acts on the results of every round of a turn, however long (the rule
// before the budget was shared by the first Rounds rounds only).
var everyRoundBudget = idleConfig{"off, turn budget on every round", func(o *proxy.Options) {
	o.NoClearWhenIdle, o.Stack = true, &stack.Config{TurnBudget: &policy.TurnBudget{Rounds: 1 << 20}}
}, false}

// sixteenRoundBudget shares the turn budget among a turn's first 16
// rounds, twice the default.
var sixteenRoundBudget = idleConfig{"off, turn budget on the first 16 rounds", func(o *proxy.Options) {
	o.NoClearWhenIdle, o.Stack = true, &stack.Config{TurnBudget: &policy.TurnBudget{Rounds: 16}}
}, false}

// throughOutcome is one bench run through a proxy: the table and the
// proxy's own counters.
type throughOutcome struct {
	tab   *bench.Table
	stats proxy.Stats
}

// benchThrough runs the bench over recs under presets and, as its last
// row, through a new proxy (a new store and workspace) configured by cfg
// whose clock follows the recordings. It fails the test when the proxy
// did not receive exactly one request per recorded call, in order.
func benchThrough(t *testing.T, recs []*replay.Recording, presets []bench.Preset, cfg idleConfig) throughOutcome {
	t.Helper()
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "proxy.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	clock := newRecordedClock(recs)
	o := &proxy.Options{Upstream: "http://" + ln.Addr().String(), Store: st, Workspace: t.TempDir(), Now: clock.Now}
	cfg.set(o)
	p, err := proxy.New(o)
	if err != nil {
		t.Fatal(err)
	}
	clock.h = p
	front := httptest.NewServer(clock)
	defer front.Close()
	tab, err := bench.Run(ctx, recs, &bench.Options{Presets: presets, Through: &bench.Through{URL: front.URL + "/v1", Listener: ln}})
	if err != nil {
		t.Fatalf("%s: %v", cfg.name, err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("%s: closing the proxy: %v", cfg.name, err)
	}
	served, errs := clock.served()
	if served != len(clock.calls) {
		t.Fatalf("%s: the proxy received %d requests for %d recorded calls: the clock would be off", cfg.name, served, len(clock.calls))
	}
	if len(errs) > 0 {
		t.Fatalf("%s: %d requests were not the recorded call the clock assumed, first: %s", cfg.name, len(errs), errs[0])
	}
	if th := throughRow(t, tab); th.Calls != tab.Rows[0].Calls {
		t.Fatalf("%s: the through row counts %d calls, none %d", cfg.name, th.Calls, tab.Rows[0].Calls)
	}
	s := p.Stats()
	if s.Requests != int64(served) {
		t.Fatalf("%s: the proxy answered %d model calls of %d requests", cfg.name, s.Requests, served)
	}
	if s.Conversations != int64(len(recs)) {
		t.Errorf("%s: %d recordings made %d conversations in the proxy: one recording splits", cfg.name, len(recs), s.Conversations)
	}
	return throughOutcome{tab: tab, stats: s}
}

// throughRow returns the table's through row.
func throughRow(t *testing.T, tab *bench.Table) bench.Row {
	t.Helper()
	r := tab.Rows[len(tab.Rows)-1]
	if !strings.HasPrefix(r.Preset, "through:") {
		t.Fatalf("the last row is %q, not the through row", r.Preset)
	}
	return r
}

// rowLine formats a row's figures as the research prints them.
func rowLine(name string, r bench.Row) string {
	return fmt.Sprintf("%-22s × none %.3f / %.3f  removed %5.1f%% / %5.1f%%  visible %5.1f%%  input %11d  cached %5.1f%%  breaks %4d  >1.01×none %2d  worst %.3f",
		name, r.Ratios["openai"], r.Ratios["anthropic"], 100*r.Removed["openai"], 100*r.Removed["anthropic"],
		100*r.VisibleShare, r.Input, 100*r.CachedShare, r.CacheBreaks, r.AboveTolerance, r.Worst)
}

func mustPresets(t *testing.T, names ...string) []bench.Preset {
	t.Helper()
	var out []bench.Preset
	for _, n := range names {
		p, err := benchlab.Lookup(n) // the product's presets and the lab's ablations
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// TestResearchThroughIdle replays the sets named by HARNESS_RESEARCH_SETS
// (comma-separated folders) through the real proxy, its clock following
// the recorded times so that it sees the recorded pauses, with the idle
// clear off, auto (Chat Completions, which the bench speaks: an hour) and
// at 5 minutes (what an Anthropic client gets), and prints the through
// row of each run beside the engine's harness and harness-no-idle rows
// (lab/NOTEBOOK.md, "Clearing after a pause"). The bench prices caches
// expiring after 5 minutes, its default. The in-process rows do not depend
// on the proxy, so only the first configuration's run replays them.
// It asserts only what must hold: one request per recorded call, no clear
// with the clear off, no configuration forwarding more bytes than the
// clear off, and a clear at 5 minutes on a set with such pauses.
func TestResearchThroughIdle(t *testing.T) {
	dirs := os.Getenv("HARNESS_RESEARCH_SETS")
	if dirs == "" {
		t.Skip("HARNESS_RESEARCH_SETS is not set")
	}
	var b strings.Builder
	for _, dir := range strings.Split(dirs, ",") {
		recs, _, err := replay.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		pauses := 0
		for _, rec := range recs {
			for _, g := range replayengine.IdleGaps(rec) {
				if g > 5*time.Minute {
					pauses++
				}
			}
		}
		fmt.Fprintf(&b, "%s: %d recordings, %d requests after a pause over 5m\n", filepath.Base(dir), len(recs), pauses)
		// The runs after the first replay in process only what the
		// through row's ratios and removed share need.
		full := mustPresets(t, "none", "harness", "harness-no-idle", "floor")
		short := mustPresets(t, "none", "floor")
		var out []throughOutcome
		for i, cfg := range idleConfigs {
			ps := short
			if i == 0 {
				ps = full
			}
			o := benchThrough(t, recs, ps, cfg)
			out = append(out, o)
			if i == 0 {
				for _, r := range o.tab.Rows[1:3] {
					fmt.Fprintln(&b, "  "+rowLine(r.Preset+" (in process)", r))
				}
			}
			s := o.stats
			fmt.Fprintf(&b, "  %s   idle clears %d (%d results, %d bytes), bytes out %d of %d\n",
				rowLine("proxy, clear "+cfg.name, throughRow(t, o.tab)), s.IdleClears, s.IdleClearedResults, s.IdleClearedBytes, s.BytesOut, s.BytesIn)
		}
		off := out[0]
		if off.stats.IdleClears != 0 {
			t.Errorf("%s: the clear is off, yet the proxy cleared at %d requests", dir, off.stats.IdleClears)
		}
		for i, cfg := range idleConfigs[1:] {
			o := out[i+1]
			if o.stats.BytesOut > off.stats.BytesOut {
				t.Errorf("%s: clear %s forwarded %d bytes, more than the %d with the clear off", dir, cfg.name, o.stats.BytesOut, off.stats.BytesOut)
			}
			if o.stats.IdleClears == 0 && off.stats.IdleClears == 0 && o.stats.BytesOut != off.stats.BytesOut {
				t.Errorf("%s: clear %s never cleared, yet forwarded %d bytes, not the %d of the clear off", dir, cfg.name, o.stats.BytesOut, off.stats.BytesOut)
			}
		}
		if pauses > 0 && out[2].stats.IdleClears == 0 {
			t.Errorf("%s: %d requests follow a pause over 5 minutes, yet the proxy with a 5-minute clear never cleared", dir, pauses)
		}
		// The turn budget on arrival, which the proxy runs by default: the
		// same proxy without it (and without the idle clear) shows what
		// the budget trades.
		nb := benchThrough(t, recs, short, noBudget)
		fmt.Fprintf(&b, "  %s   bytes out %d of %d\n", rowLine("proxy, clear off, no turn budget", throughRow(t, nb.tab)), nb.stats.BytesOut, nb.stats.BytesIn)
		if nb.stats.BytesOut < off.stats.BytesOut {
			t.Errorf("%s: without the turn budget the proxy forwarded %d bytes, fewer than the %d with it", dir, nb.stats.BytesOut, off.stats.BytesOut)
		}
		// A budget four times the default's, between the two.
		wide := benchThrough(t, recs, short, wideBudget)
		fmt.Fprintf(&b, "  %s   bytes out %d of %d\n", rowLine("proxy, clear off, turn budget 96,000", throughRow(t, wide.tab)), wide.stats.BytesOut, wide.stats.BytesIn)
		if wide.stats.BytesOut < off.stats.BytesOut || wide.stats.BytesOut > nb.stats.BytesOut {
			t.Errorf("%s: a 96,000-char budget forwarded %d bytes, not between %d and %d", dir, wide.stats.BytesOut, off.stats.BytesOut, nb.stats.BytesOut)
		}
		// The budget shared by more rounds than the default's first
		// harness.DefaultMaxRounds: each budgets more results, so forwards
		// no more bytes.
		prev := off
		for _, cfg := range []idleConfig{sixteenRoundBudget, everyRoundBudget} {
			o := benchThrough(t, recs, short, cfg)
			fmt.Fprintf(&b, "  %s   bytes out %d of %d\n", rowLine("proxy, clear "+cfg.name, throughRow(t, o.tab)), o.stats.BytesOut, o.stats.BytesIn)
			if o.stats.BytesOut > prev.stats.BytesOut {
				t.Errorf("%s: %s forwarded %d bytes, more than the %d of a budget on fewer rounds", dir, cfg.name, o.stats.BytesOut, prev.stats.BytesOut)
			}
			prev = o
		}
	}
	t.Log("\n" + b.String())
}

// TestThroughRecordedClock replays one shipped Claude Code recording that
// pauses for 55 minutes through the proxy whose clock follows the recorded
// times: with the clear at 5 minutes the proxy clears at the pause, and
// what reached the upstream is fewer input tokens than with the clear off.
func TestThroughRecordedClock(t *testing.T) {
	rec, err := replay.ParseFile(filepath.Join("..", "..", "bench", "data", "claude-code", "RyanLisse__big3", "logs__chat.json.6d611bf6.json"))
	if err != nil {
		t.Fatal(err)
	}
	longest := time.Duration(0)
	for _, g := range replayengine.IdleGaps(rec) {
		longest = max(longest, g)
	}
	if longest < 50*time.Minute {
		t.Fatalf("the recording's longest pause is %s; the test needs its 55-minute pause", longest)
	}
	recs := []*replay.Recording{rec}
	none := mustPresets(t, "none")
	off := benchThrough(t, recs, none, idleConfigs[0])
	five := benchThrough(t, recs, none, idleConfigs[2])
	if off.stats.IdleClears != 0 {
		t.Errorf("clear off: %d idle clears", off.stats.IdleClears)
	}
	if five.stats.IdleClears < 1 || five.stats.IdleClearedBytes <= 0 {
		t.Errorf("clear at 5m: %d idle clears (%d bytes), want at least 1 at the 55-minute pause", five.stats.IdleClears, five.stats.IdleClearedBytes)
	}
	offIn, fiveIn := throughRow(t, off.tab).Input, throughRow(t, five.tab).Input
	if fiveIn >= offIn {
		t.Errorf("input tokens through the proxy: %d with the clear at 5m, %d with it off: want fewer", fiveIn, offIn)
	}
	t.Logf("input through the proxy: %d off, %d with the clear at 5m (%d clears, %d bytes)", offIn, fiveIn, five.stats.IdleClears, five.stats.IdleClearedBytes)
}
