package replayengine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentharness/harness/replay"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/locator"
	"github.com/agentharness/harness/internal/promptunit"
	"github.com/agentharness/harness/tokens"
)

// Config is a policy made concrete for one replay: the per-call guards
// every recorded result goes through and the view policies every request
// is built with.
type Config struct {
	Guards   []harness.Guard
	Policies []harness.ViewPolicy
	// Recall says the system can show any stored result again by its call
	// id (harness's transcript store), so evidence that a cut marks with a
	// "call:<id>" locator, or that compaction moved out of the view, is
	// recoverable. Spill files are checked on disk whatever Recall says.
	Recall bool
	// KeepToolsOnFinal replays the synthesis call (tools withheld after
	// the round limit or a stop) the way harness.Options.KeepToolsOnFinal
	// makes it: the turn's tool schemas are still sent, calls forbidden
	// (tool_choice "none"), so the request keeps the cached prefix of the
	// previous one. Off, the synthesis call sends no schemas.
	KeepToolsOnFinal bool
	// Selector, when set, chooses the tools of each recorded turn the way
	// the agent does: it is called once per turn, with the conversation
	// replayed so far (the new turn appended) and the turn's user input,
	// and only the tools it returns are offered (and counted) in the
	// turn's requests. An error offers every tool, as the agent does.
	//
	// A selector always picks from Recording.Tools (for a store, the union
	// of every list the run offered) and its choice replaces the calls'
	// own recorded lists (Call.Tools): a replay with a selector measures
	// that selection, not the run's. Without one, a call that recorded
	// its list offers exactly that list.
	Selector harness.Selector
	// Reread, when set, is told of each recovery round (see [Recovery]) as
	// a live agent makes it: the round's calls (a read of a spill file,
	// the recall tool, a read-only call run again), once the request the
	// round precedes is built and before the results of that request's
	// calls go through the guards. It is how a preset whose guards adapt
	// to what the agent reads back learns of the reads: in a live run the
	// round is one more round of tool calls in the transcript, which the
	// replay prices beside the requests of Report.Calls unless
	// SendRecoveries sends it. Needles the recording itself never showed
	// are read back too (the bench leaves them out of the price, not out
	// of this).
	Reread func(calls []harness.ToolCall)
	// SendRecoveries sends the recovery rounds the bench charges as a
	// live agent makes them (see [Recovery]): requests of Report.Calls
	// whose calls and pages join the conversation every later request and
	// policy sees. Off, the bench prices them from their figures alone,
	// and the policies never see them.
	SendRecoveries bool
}

// Policy names a configuration. New is called once per replay, with a
// fresh temporary workspace for spill files, so stateful guards and
// policies start clean.
type Policy struct {
	Name string
	New  func(env Env) (*Config, error)
}

// Env is what a policy is built for.
type Env struct {
	// Workspace is a fresh temporary folder, removed after the replay.
	Workspace string
	// Model is the recording's model ("" when unknown).
	Model string
	// Counter is the replay's token counter.
	Counter tokens.Counter
	// Needles are the evidence the recording's agent will use (see
	// [Needles]): what a bound that knows the future may keep and a
	// policy must not look at.
	Needles []Needle
	// CacheTTL is the lifetime of the prompt cache the replay is priced
	// with (Options.CacheTTL; 0: not said) and NoCacheExpiry says that
	// cache never expires. A preset that clears once the cache has gone
	// cold must not clear sooner, or it pays a miss the pricing never
	// charges keeping everything.
	CacheTTL      time.Duration
	NoCacheExpiry bool
}

// Options tune a replay; nil means defaults.
type Options struct {
	// Counter counts tokens; nil means o200k behind a tokens.Cache (65,536
	// entries a generation, the texts of a run of thousands of rounds). Share
	// one cached counter between replays of the same recording. Images
	// are priced by the rule of the recording's provider (by its model,
	// else its agent) whatever rule the counter carries.
	Counter tokens.Counter
	// Needles are rec's needles when already extracted; nil extracts them.
	Needles []Needle
	// KeepText keeps, for every result, the text the model was shown of it
	// at the next call (ResultStat.ModelText).
	KeepText bool
	// TempDir is where the temporary workspace is made; "" means the
	// system's.
	TempDir string
	// NoShown leaves CallStat.Shown empty. Shown lists every tool message
	// of every request, so it grows with the square of a run's length and
	// costs a pass over every result shown per request; totals (the
	// bench's tables) do not need it.
	NoShown bool
	// CacheTTL and NoCacheExpiry are the prompt cache's lifetime the
	// replay will be priced with, handed to the policy (Env.CacheTTL):
	// harness bench's --cache-ttl. Zero and false say nothing, and the
	// policy assumes what it would live.
	CacheTTL      time.Duration
	NoCacheExpiry bool
}

// Shown is one tool message of a request: which result, in what state,
// and how many characters of it the model saw.
type Shown struct {
	CallID string
	State  string // whole, trimmed, spilled, deduped or cleared
	Chars  int
}

// CallStat measures one request the policy would have sent.
type CallStat struct {
	// Index counts model calls from 1 over the whole recording; Turn and
	// Round locate it (from 1). A reveal round, a request the replay adds
	// before a recorded call whose tool the list did not show whole (a
	// deferred tool's stub, or a tool the selection did not offer), has
	// Index 0, as has a recovery round the replay sends (Recovery.Sent).
	Index, Turn, Round int
	// Input is the request's tokens (o200k, with the chat format's
	// framing), Cached the tokens of its prefix unchanged since the
	// previous request, Output the tokens the recorded call produced (its
	// reply counted where the source records no usage for it).
	Input, Cached, Output int
	// EvidenceChars counts the tool-result characters of the request.
	EvidenceChars int
	// Tools is the number of tool schemas offered and ToolTokens their
	// tokens.
	Tools, ToolTokens int
	// Final is set when tools were withheld; Stopped when a policy ended
	// the turn's tool rounds at this call (later calls of the turn are
	// skipped).
	Final, Stopped bool
	Shown          []Shown
	// Recorded is what the provider billed for this call in the recording.
	Recorded harness.Usage
}

// Usage is the call's figures as a harness.Usage.
func (c *CallStat) Usage() harness.Usage {
	return harness.Usage{Input: c.Input, Cached: c.Cached, Output: c.Output}
}

// ResultStat describes one tool result as replayed.
type ResultStat struct {
	CallID, Tool string
	Args         string
	Turn, Round  int
	FullChars    int
	ShownChars   int // at arrival, after the guards
	State        string
	// ModelText is what the model saw of the result at the next call
	// (kept with Options.KeepText).
	ModelText string
}

// Report is the outcome of one replay.
type Report struct {
	Recording string
	Policy    string
	Calls     []CallStat
	Results   []ResultStat
	// SkippedCalls counts recorded calls not replayed because a policy
	// stopped their turn earlier.
	SkippedCalls int
	// Needles counts the evidence the agent used; Visible how much was in
	// the request of the call that first used it; Recoverable adds what a
	// spill file or the store still held.
	Needles, Visible, Recoverable int
	// Lost lists needles neither visible nor recoverable (at most 50).
	Lost []Needle
	// Recoveries are the rounds a live agent would add to read back
	// needles a request no longer shows (see [Recovery]), in order; the
	// requests of Calls include only the rounds Sent (Config.SendRecoveries)
	// as requests of Index 0. Unrecovered lists the
	// needles no read-only path brings back: no spill file or stored copy
	// holds them and the call that returned them was not read-only.
	Recoveries  []Recovery
	Unrecovered []string
	// Unoffered lists the recorded tool calls (as "turn/call-id tool")
	// whose tool the policy's selection did not offer in that turn: they
	// measure what a selection would have missed. A live model could not
	// have made them from the list alone, so the replay prices, before the
	// turn's first call of each such tool, a reveal round that teaches its
	// schema (see the Calls of Index 0), then runs the recorded call.
	Unoffered []string
	// Usage sums the calls; Effective is its cache-aware cost.
	Usage     harness.Usage
	Effective float64
}

// VisibleShare is Visible ÷ Needles (1 when there are none).
func (r *Report) VisibleShare() float64 { return share(r.Visible, r.Needles) }

// RecoverableShare is Recoverable ÷ Needles (1 when there are none).
func (r *Report) RecoverableShare() float64 { return share(r.Recoverable, r.Needles) }

func share(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// Replay re-applies pol to rec with no model (see the package doc).
func Replay(ctx context.Context, rec *replay.Recording, pol Policy, opts *Options) (*Report, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Counter == nil {
		bpe, err := tokens.O200k()
		if err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		o.Counter = tokens.NewCache(bpe, &tokens.CacheOptions{MaxEntries: 1 << 16})
	}
	o.Counter = tokens.WithImageRule(o.Counter, imageRule(rec))
	if o.Needles == nil {
		o.Needles = Needles(rec)
	}
	ws, err := os.MkdirTemp(o.TempDir, "harness-replay-")
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer os.RemoveAll(ws)
	if pol.New == nil {
		return nil, fmt.Errorf("replay: policy %q has no configuration", pol.Name)
	}
	cfg, err := pol.New(Env{Workspace: ws, Model: rec.Model, Counter: o.Counter, Needles: o.Needles, CacheTTL: o.CacheTTL, NoCacheExpiry: o.NoCacheExpiry})
	if err != nil {
		return nil, fmt.Errorf("replay: policy %q: %w", pol.Name, err)
	}
	e := &engine{rec: rec, cfg: cfg, opts: o, ws: ws, model: &recordedModel{cache: tokens.NewPromptCache(o.Counter), counter: o.Counter},
		report: &Report{Recording: rec.ID, Policy: pol.Name}, revealed: map[revealKey]bool{}}
	e.eng, err = harness.NewEngine(&harness.Options{System: rec.System, Guards: cfg.Guards, Policies: cfg.Policies,
		Selector: cfg.Selector, KeepToolsOnFinal: cfg.KeepToolsOnFinal, Workspace: ws, Now: func() time.Time { return e.clock }})
	if err != nil {
		return nil, fmt.Errorf("replay: policy %q: %w", pol.Name, err)
	}
	e.conv = harness.NewConversation(convID(rec))
	e.byUse = map[[2]int][]Needle{}
	for _, n := range o.Needles {
		k := [2]int{n.Turn, n.Call}
		e.byUse[k] = append(e.byUse[k], n)
	}
	e.report.Needles = len(o.Needles)
	if err := e.run(ctx); err != nil {
		return nil, err
	}
	return e.report, nil
}

func convID(rec *replay.Recording) string {
	if rec.ID != "" {
		return rec.ID
	}
	return "replay"
}

type engine struct {
	rec *replay.Recording
	// clock is the recorded time of the call being replayed, which the
	// engine reads as its clock (Options.Now): View.Idle is then the
	// recorded pause before the call (IdleGaps), 0 where none is recorded.
	clock time.Time
	cfg   *Config
	opts  Options
	ws    string
	conv  *harness.Conversation
	// eng runs the rounds as the live agent does; model answers each
	// request with the recorded message, its usage counted by cache.
	eng   *harness.Engine
	model *recordedModel
	// turnTools are the tools of the current turn (the selection, or
	// every recorded tool); tools are those offered in the current call
	// (turnTools, or the call's own recorded list).
	turnTools []harness.ToolSpec
	tools     []harness.ToolSpec
	report    *Report
	byUse     map[[2]int][]Needle
	// Results whose model text is taken from the next request.
	waiting []int
	// revealed names the schemas a reveal round has taught (see reveal).
	revealed map[revealKey]bool
	// recovered holds, per recovery round (Report.Recoveries), the texts
	// it read back, in every later request until the policy clears the
	// round (see forget); calls indexes the recorded calls by id (see
	// recordedCall).
	recovered []recoveredRound
	calls     map[string]recorded
}

// recordedModel is the replay's model: it answers each request with the
// recorded assistant message of the call being replayed, with usage
// counted by the one prompt-cache model (tokens.PromptCache) and the
// recorded output tokens.
type recordedModel struct {
	cache   *tokens.PromptCache
	counter tokens.Counter
	next    *replay.Call
	count   tokens.Count
}

// Generate answers req with the recorded message of m.next.
func (m *recordedModel) Generate(_ context.Context, req *harness.Request) (*harness.Response, error) {
	m.count = m.cache.Add(req)
	return &harness.Response{Message: m.next.Assistant, Usage: m.count.Usage(m.output())}, nil
}

// output is the tokens the recorded call produced: what the provider
// billed, or, where the source records no usage for it, its reply counted
// (text and tool calls; reasoning it did not record is not in it).
func (m *recordedModel) output() int {
	if m.next.HasUsage {
		return m.next.Usage.Output
	}
	return max(tokens.CountMessage(m.counter, &m.next.Assistant)-promptunit.MessageOverhead, 0)
}

func (e *engine) run(ctx context.Context) error {
	index := 0
	for ti, rt := range e.rec.Turns {
		turn, err := e.eng.BeginTurn(ctx, e.conv, rt.Input)
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		// Before the turn's first view: its requests send the context
		// messages the client sent with the input.
		turn.Context = rt.Context
		e.selectTools(ctx, turn)
		for ci := 0; ci < len(rt.Calls); ci++ {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("replay: %w", err)
			}
			index++
			stopped, err := e.call(ctx, turn, rt.Calls[ci], index, ti, ci)
			if err != nil {
				return err
			}
			if stopped {
				e.report.SkippedCalls += len(rt.Calls) - ci - 1
				// Needles first used in the skipped calls were never seen.
				break
			}
		}
	}
	// The last results' model text is their copy at arrival.
	for _, k := range e.waiting {
		r := &e.report.Results[k]
		if res := e.conv.FindResult(r.CallID); res != nil && e.opts.KeepText {
			r.ModelText = res.ModelText()
		}
	}
	e.report.Effective = e.report.Usage.Effective()
	return nil
}

// call replays recorded call rc (the index-th of the recording, call ci of
// turn ti) through the engine's steps: the request the policy builds, the
// recorded reply, the recorded results through the guards. stopped says a
// policy ended the turn's tool rounds at this call.
func (e *engine) call(ctx context.Context, turn *harness.Turn, rc *replay.Call, index, ti, ci int) (stopped bool, err error) {
	e.offer(rc)
	e.clock = rc.Time // the engine's clock reads the recorded times (View.Idle)
	revealed := false
	if !rc.Final {
		if revealed, err = e.reveal(ctx, turn, rc, ti, ci); err != nil {
			return false, err
		}
	}
	view, req, err := e.eng.Request(ctx, e.conv, turn, e.tools, rc.Final, false)
	if err != nil {
		return false, fmt.Errorf("replay: %s: %w", e.rec.Source, err)
	}
	if !revealed { // else the reveal round's request was checked
		if view, req, err = e.checked(ctx, turn, view, req, rc.Final, ti, ci); err != nil {
			return false, err
		}
	}
	stopped = !rc.Final && view.Stop != ""
	e.model.next = rc
	resp, _ := e.model.Generate(ctx, req)
	round := e.eng.Round(ctx, e.conv, turn, view, resp)
	st := e.measure(view, round.Stats.EvidenceChars, e.model.count)
	st.Index, st.Turn, st.Round = index, turn.Index, view.Round
	st.Output, st.Recorded = e.model.output(), rc.Usage
	st.Final, st.Stopped = view.Final, stopped
	e.report.Calls = append(e.report.Calls, st)
	e.report.Usage = e.report.Usage.Add(st.Usage())

	if !view.Final {
		e.checkOffered(turn.Index, round.Assistant.ToolCalls)
		e.results(ctx, turn, round, rc, view)
	}
	if err := e.eng.AppendRound(ctx, e.conv, turn, round); err != nil {
		return false, fmt.Errorf("replay: %w", err)
	}
	return stopped, nil
}

// selectTools sets the tools of the turn being replayed: the policy's
// selection for its input (the engine's Selector), or every recorded tool.
func (e *engine) selectTools(ctx context.Context, turn *harness.Turn) {
	e.turnTools = e.eng.SelectTools(ctx, e.conv, turn, e.rec.Tools)
	e.tools = e.turnTools
}

// offer sets the tools of recorded call rc: its own recorded list when it
// has one and the policy has no selector, else the turn's. A recorded
// synthesis call sent no schemas, so it keeps the list of the call before
// it: a policy that keeps tools on the final call (KeepToolsOnFinal)
// sends that list, as the agent would.
func (e *engine) offer(rc *replay.Call) {
	switch {
	case e.cfg.Selector != nil || rc.Tools == nil:
		e.tools = e.turnTools
	case rc.Final && len(rc.Tools) == 0:
	default:
		e.tools = rc.Tools
	}
}

// spec is the schema of a call's tool: from the list the call offered,
// else from the recording's.
func (e *engine) spec(call harness.ToolCall) harness.ToolSpec {
	for _, t := range e.tools {
		if t.Name == call.Name {
			return specFor(&replay.Recording{Tools: []harness.ToolSpec{t}}, call)
		}
	}
	return specFor(e.rec, call)
}

// checkOffered records the calls of a round whose tool is one the
// recording offered but the turn's selection did not (see unoffered).
func (e *engine) checkOffered(turn int, calls []harness.ToolCall) {
	for _, c := range calls {
		if _, ok := e.unoffered(c.Name); ok {
			e.report.Unoffered = append(e.report.Unoffered, fmt.Sprintf("%d/%s %s", turn, c.ID, c.Name))
		}
	}
}

// results admits the recorded results of round's calls through the
// preset's guards (Engine.Admit with the recorded result as the tool), as
// the live agent admits a tool's. view is the request the recorded calls
// answered: guards get it as CallInfo.View.
func (e *engine) results(ctx context.Context, turn *harness.Turn, round *harness.Round, rc *replay.Call, view *harness.View) {
	byID := map[string]*replay.Result{}
	for _, r := range rc.Results {
		byID[r.CallID] = r
	}
	info := e.eng.CallInfo(e.conv, turn, round, view)
	for _, call := range round.Assistant.ToolCalls {
		rr, ok := byID[call.ID]
		if !ok {
			continue // never answered in the recording
		}
		info.Spec = e.spec(call)
		recorded := &harness.ToolResult{CallID: rr.CallID, Tool: call.Name, IsError: rr.IsError, Parts: rr.Full, Structured: rr.Structured}
		res := e.eng.Admit(ctx, info, call, harness.Returning(recorded))
		round.Results = append(round.Results, res)
		e.waiting = append(e.waiting, len(e.report.Results))
		e.report.Results = append(e.report.Results, ResultStat{
			CallID: call.ID, Tool: call.Name, Args: string(call.Args), Turn: turn.Index, Round: round.Index,
			FullChars: utf8.RuneCountInString(rr.FullText()), ShownChars: utf8.RuneCountInString(res.ModelText()),
			State: state(res.Cuts, nil),
		})
	}
}

// measure turns the prompt-cache count of the request built from v (with
// evidence characters, from the request's figures) into the call's
// figures, and takes the model text of the previous round's results from
// what v shows of them.
func (e *engine) measure(v *harness.View, evidence int, count tokens.Count) CallStat {
	st := CallStat{EvidenceChars: evidence, Input: count.Input, Cached: count.Cached,
		Tools: len(v.SentTools()), ToolTokens: count.ToolTokens}
	for i := range v.Messages {
		m := &v.Messages[i]
		if m.Role == harness.RoleTool && !e.opts.NoShown {
			st.Shown = append(st.Shown, Shown{CallID: m.ToolCallID, State: state(resultCuts(v.Origins[i].Result), v.Origins[i].Cuts), Chars: utf8.RuneCountInString(m.Text())})
		}
	}
	if len(e.waiting) > 0 {
		for _, k := range e.waiting {
			r := &e.report.Results[k]
			if i, ok := lastToolMessage(v, r.CallID); ok {
				r.State = state(resultCuts(v.Origins[i].Result), v.Origins[i].Cuts)
				if e.opts.KeepText {
					r.ModelText = v.Messages[i].Text()
				}
			} else {
				r.State = string(harness.CutCleared)
			}
		}
		e.waiting = e.waiting[:0]
	}
	return st
}

// lastToolMessage finds the last tool message of v that shows callID's
// result. The results waiting for their next request are the newest, so
// the search from the end stops within the last round's messages.
func lastToolMessage(v *harness.View, callID string) (int, bool) {
	for i := len(v.Messages) - 1; i >= 0; i-- {
		if m := &v.Messages[i]; m.Role == harness.RoleTool && m.ToolCallID == callID {
			return i, true
		}
	}
	return 0, false
}

func resultCuts(r *harness.ToolResult) []harness.Cut {
	if r == nil {
		return nil
	}
	return r.Cuts
}

// state names what was done to a result: the last cut's kind, with a
// truncation (a cut at arrival without a spill file) reported as trimmed.
func state(arrival, view []harness.Cut) string {
	cuts := append(append([]harness.Cut(nil), arrival...), view...)
	if len(cuts) == 0 {
		return "whole"
	}
	switch k := cuts[len(cuts)-1].Kind; k {
	case harness.CutTruncated:
		return string(harness.CutTrimmed)
	default:
		return string(k)
	}
}

// checked checks the needles call (ti, ci) first uses against v, the
// request built for it (req), and adds the round that reads back those v
// hides (see recover). It returns the request to send for the call: v, or
// the request built again after a round sent through the engine.
func (e *engine) checked(ctx context.Context, turn *harness.Turn, v *harness.View, req *harness.Request, final bool, ti, ci int) (*harness.View, *harness.Request, error) {
	sent, err := e.recover(ctx, turn, v, req, e.retention(v, ti, ci))
	if err != nil || !sent {
		return v, req, err
	}
	v, req, err = e.eng.Request(ctx, e.conv, turn, e.tools, final, false)
	if err != nil {
		return nil, nil, fmt.Errorf("replay: %s: %w", e.rec.Source, err)
	}
	return v, req, nil
}

// retention checks the needles first used by call (ti, ci) against v and
// returns those v hides. A recovery round's pages are not the preset's
// showing: they count as hidden (recover reads them again only when the
// round's page is gone).
func (e *engine) retention(v *harness.View, ti, ci int) []Needle {
	needles := e.byUse[[2]int{ti, ci}]
	if len(needles) == 0 {
		e.forget(v)
		return nil
	}
	texts := make([]string, len(v.Messages))
	for i, m := range v.Messages {
		if isRecovery(m.ToolCallID) {
			continue
		}
		if len(m.ToolCalls) == 0 {
			texts[i] = m.Text() // no copy: tool results are most of the view
			continue
		}
		var b strings.Builder
		b.WriteString(m.Text())
		for _, tc := range m.ToolCalls {
			b.WriteString("\n")
			b.Write(tc.Args)
		}
		texts[i] = b.String()
	}
	e.forget(v)
	var hidden []Needle
	for _, n := range needles {
		if containsAny(texts, n.Text) {
			e.report.Visible++
			e.report.Recoverable++
			continue
		}
		hidden = append(hidden, n)
		if e.recoverable(v, n) {
			e.report.Recoverable++
			continue
		}
		if len(e.report.Lost) < 50 {
			e.report.Lost = append(e.report.Lost, n)
		}
	}
	return hidden
}

func containsAny(texts []string, s string) bool {
	for _, t := range texts {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

// recoverable reports whether a needle hidden from v can still be fetched:
// a spill file of its result holds it, or the store does and the system
// can recall stored results.
func (e *engine) recoverable(v *harness.View, n Needle) bool {
	var cuts []harness.Cut
	found := false
	for i, m := range v.Messages {
		if m.Role == harness.RoleTool && m.ToolCallID == n.CallID {
			found = true
			cuts = append(append(cuts, resultCuts(v.Origins[i].Result)...), v.Origins[i].Cuts...)
		}
	}
	if !found {
		// Compacted out of the view: only the store has it.
		return e.cfg.Recall
	}
	for _, c := range cuts {
		switch {
		case c.Locator == "":
		case locator.IsCall(c.Locator):
			if e.cfg.Recall {
				return true
			}
		default:
			if e.spillHolds(c.Locator, n.Text) {
				return true
			}
		}
	}
	return false
}

// spillHolds reports whether the spill file at locator (relative to the
// workspace) contains s.
func (e *engine) spillHolds(locator, s string) bool {
	p := filepath.Join(e.ws, filepath.FromSlash(locator))
	if rel, err := filepath.Rel(e.ws, p); err != nil || strings.HasPrefix(rel, "..") {
		return false
	}
	b, err := os.ReadFile(p)
	return err == nil && strings.Contains(string(b), s)
}
