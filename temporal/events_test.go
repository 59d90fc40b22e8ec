package temporal_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/store"
	htemporal "github.com/agentharness/harness/temporal"
)

// eventsConv is the conversation of the event tests, the same id in both
// runs.
const eventsConv = "conv-ev"

// eventsOptions are the options of both runs of the event tests: the
// count and big tools, chosen by sel, recording into st and observing with
// st.Observe as harness-temporal worker does, a turn budget that trims
// every request after the first (its four count results alone exceed it)
// and the result ceiling, which cuts big's megabyte as the call runs.
func eventsOptions(dir string, st store.Store, sel harness.Selector) *harness.Options {
	counter := filepath.Join(dir, "counter")
	return &harness.Options{
		System: "You count.", Tools: []harness.Tool{countTool(counter), bigTool(counter)}, MaxRounds: 6,
		Recorder: st, Observer: st.Observe, Selector: sel,
		Guards:   []harness.Guard{(&guard.ResultPolicy{NoSpill: true}).Guard()},
		Policies: []harness.ViewPolicy{&policy.TurnBudget{When: policy.EveryRound, Chars: 40, MinKeep: 12}},
	}
}

// reversingSelector offers the tools in reverse order and reports, through
// Emit, what it chose and a warning, as a selector that ranks the tools
// for the input does; calls counts its calls.
type reversingSelector struct{ calls atomic.Int32 }

func (s *reversingSelector) Select(ctx context.Context, _ *harness.Conversation, input string, tools []harness.ToolSpec) ([]harness.ToolSpec, error) {
	s.calls.Add(1)
	out := slices.Clone(tools)
	slices.Reverse(out)
	harness.Emit(ctx, harness.Event{Kind: harness.EventPolicy, Policy: "selector", Detail: fmt.Sprintf("chose %d of %d tools for %q", len(out), len(tools), input)})
	harness.Emit(ctx, harness.Event{Kind: harness.EventWarning, Policy: "selector", Detail: "no ranking for the input: tools offered by name"})
	return out, nil
}

// errUnavailable is the model's retryable failure: a 503 the provider
// gave up on, which Temporal retries as it retries any activity error.
var errUnavailable = errors.New("model: 503 service unavailable")

// failOnce fails the first request of round round with err, once, after
// its view was built and reported.
type failOnce struct {
	round int
	err   error
	mu    sync.Mutex
	done  bool
}

func (f *failOnce) Generate(ctx context.Context, req *harness.Request) (*harness.Response, error) {
	f.mu.Lock()
	fail := !f.done && req.Round == f.round
	f.done = f.done || fail
	f.mu.Unlock()
	if fail {
		return nil, f.err
	}
	return warningModel(ctx, req)
}

// warningModel is scriptModel reporting, on round 1, a warning through
// Emit as a provider reports a retry it made: the in-process agent stores
// it with the turn's events, and so must a durable turn.
func warningModel(ctx context.Context, req *harness.Request) (*harness.Response, error) {
	if req.Round == 1 {
		harness.Emit(ctx, harness.Event{Kind: harness.EventWarning, Turn: req.Turn, Round: req.Round,
			Detail: "retrying (1/3) in 0s: provider: 503 Service Unavailable", Data: map[string]any{"provider": "test", "retry": 1}})
	}
	return scriptModel(ctx, req)
}

// failingJournal fails the first Put of an entry whose name starts with
// prefix and ends in suffix, once: a tool result ("call:", after the tool
// ran and its guards reported) or a turn's tools ("tools:", after the
// selector reported).
type failingJournal struct {
	htemporal.Journal
	prefix, suffix string
	mu             sync.Mutex
	done           bool
}

func (j *failingJournal) Put(ctx context.Context, k htemporal.Key, v []byte) ([]byte, error) {
	j.mu.Lock()
	fail := !j.done && strings.HasPrefix(k.Name, j.prefix) && strings.HasSuffix(k.Name, j.suffix)
	j.done = j.done || fail
	j.mu.Unlock()
	if fail {
		return nil, errors.New("journal: disk I/O error")
	}
	return j.Journal.Put(ctx, k, v)
}

// eventKey is what an event says, without its time and durations.
func eventKey(e harness.Event) string {
	call := ""
	if e.Call != nil {
		call = e.Call.ID
	}
	return fmt.Sprintf("%s %s r%d %s %q", e.Kind, e.Policy, e.Round, call, e.Detail)
}

// turnLog is what the store says of the turn: its events, and the calls
// as "harness log show --json" prints them (with the view cuts of each
// request).
type turnLog struct {
	events []string
	calls  string
}

func readTurnLog(t *testing.T, st store.Store) turnLog {
	t.Helper()
	ctx := context.Background()
	evs, err := st.Events(ctx, eventsConv, 1)
	if err != nil {
		t.Fatal(err)
	}
	var out turnLog
	for _, e := range evs {
		out.events = append(out.events, eventKey(e))
	}
	calls, err := st.Calls(ctx, eventsConv, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(calls, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	out.calls = string(b)
	return out
}

// repeatedViewCuts lists the view cuts the SQLite store at path indexes
// more than once for one request: Calls shows a request's repeated cut
// once, the table holds each copy.
func repeatedViewCuts(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_query_only=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT call_id, request, by, COUNT(*) FROM view_cuts WHERE conv_id = ? GROUP BY call_id, request, by HAVING COUNT(*) > 1`, eventsConv)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var (
			call, by   string
			request, n int
		)
		if err := rows.Scan(&call, &request, &by, &n); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s in request %d by %s: %d times", call, request, by, n))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRetriedStepEvents runs a turn whose second model call fails once
// with a retryable error (after its view's turn budget trimmed two
// results) and whose big call's result fails to be journalled once (after
// the ceiling cut it), so Temporal retries both activities. The store
// holds the events the in-process agent stores for the same turn, which
// neither fails — each request's policy events, each guard event and each
// tool result once, in the same order — and the same calls and view cuts
// for "harness log show", the view_cuts table holding each cut once per
// request; the retried call did run twice.
func TestRetriedStepEvents(t *testing.T) {
	want := inProcessTurnLog(t)
	if !slices.ContainsFunc(want.events, func(e string) bool { return strings.Contains(e, "retrying (1/3)") }) {
		t.Fatalf("the in-process turn stored no model warning:\n%s", strings.Join(want.events, "\n"))
	}

	dir := t.TempDir()
	model := &failOnce{round: 2, err: errUnavailable}
	var jr *failingJournal
	st := durableTurn(t, dir, durableSetup{model: model, journal: func(j htemporal.Journal) htemporal.Journal {
		jr = &failingJournal{Journal: j, prefix: "call:", suffix: "_r3_1"}
		return jr
	}})
	if ran := counts(t, dir)[eventsConv+"/call_t1_r3_1"]; !model.done || !jr.done || ran != 2 {
		t.Fatalf("the model failed: %v, the journal failed: %v, the big call ran %d time(s); want one failure each and two runs", model.done, jr.done, ran)
	}
	got := readTurnLog(t, st)
	if !slices.Equal(got.events, want.events) {
		t.Errorf("the durable turn's stored events:\n%s\nthe in-process turn's:\n%s", strings.Join(got.events, "\n"), strings.Join(want.events, "\n"))
	}
	if got.calls != want.calls {
		t.Errorf("the durable turn's calls (harness log show):\n%s\nthe in-process turn's:\n%s", got.calls, want.calls)
	}
	if rep := repeatedViewCuts(t, filepath.Join(dir, "harness.db")); len(rep) > 0 {
		t.Errorf("view cuts indexed more than once: %s", strings.Join(rep, "; "))
	}
}

// inProcessTurnLog runs the events turn with harness.Agent (warningModel,
// which no step fails) and returns what its store says of it: the list a
// durable turn's store must hold, whatever its steps' retries.
func inProcessTurnLog(t *testing.T) turnLog {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	dir := t.TempDir()
	_, st := openStackStore(t, dir)
	agent, err := harness.New(harness.ModelFunc(warningModel), eventsOptions(dir, st, &reversingSelector{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.Run(ctx, harness.NewConversation(eventsConv), "count"); err != nil {
		t.Fatal(err)
	}
	return readTurnLog(t, st)
}

// durableSetup is how durableTurn runs the events turn: what fails, and
// where the store is. A field left zero leaves that part as it is.
type durableSetup struct {
	// model answers (warningModel when nil).
	model harness.Model
	// journal wraps the journal.
	journal func(htemporal.Journal) htemporal.Journal
	// recorder wraps the store as the engine's recorder (the activities
	// resume, load and observe with the store itself).
	recorder func(store.Store) harness.Recorder
	// selector chooses the turn's tools (a fresh reversingSelector when nil).
	selector *reversingSelector
	// interceptors are the worker's.
	interceptors []interceptor.WorkerInterceptor
	// postgres keeps the store and the journal in a fresh database of
	// pgServer instead of SQLite files in dir.
	postgres bool
}

// durableTurn runs the events turn on a worker of a fresh server, its
// store and journal in dir (or in PostgreSQL), as setup says, and returns
// the store.
func durableTurn(t *testing.T, dir string, setup durableSetup) store.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	db, jpath := filepath.Join(dir, "harness.db"), filepath.Join(dir, "journal.db")
	if setup.postgres {
		db = pgServer.DSN(t)
		jpath = db
	}
	st, err := htemporal.OpenStore(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	j, err := htemporal.OpenJournal(ctx, jpath)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if setup.selector == nil {
		setup.selector = &reversingSelector{}
	}
	opts := eventsOptions(dir, st, setup.selector)
	if setup.recorder != nil {
		opts.Recorder = setup.recorder(st)
	}
	eng, err := harness.NewEngine(opts)
	if err != nil {
		t.Fatal(err)
	}
	var jr htemporal.Journal = j
	if setup.journal != nil {
		jr = setup.journal(j)
	}
	model := setup.model
	if model == nil {
		model = harness.ModelFunc(warningModel)
	}
	acts := &htemporal.Activities{Engine: eng, Store: st, Model: model, Journal: jr}
	w := ts.NewWorkerWithOptions("q-events", acts.Register, htemporal.WorkerOptions(worker.Options{Interceptors: setup.interceptors}))
	defer w.Stop()
	run, err := htemporal.StartTurn(ctx, ts.GetDefaultClient(), "q-events", testInput(eventsConv, "count"))
	if err != nil {
		t.Fatal(err)
	}
	var out htemporal.TurnOutput
	if err := run.Get(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if out.Outcome != harness.Answered || out.Rounds != 4 {
		t.Fatalf("turn = %+v, want answered after 4 rounds", out)
	}
	return st
}

// TestOverflowRetryEvents: a request the model rejects as too large is
// rebuilt and sent again within one attempt of the model step; both are
// requests the model received, so the store keeps the events of both
// views, as the in-process agent's log does.
func TestOverflowRetryEvents(t *testing.T) {
	dir := t.TempDir()
	model := &failOnce{round: 2, err: fmt.Errorf("model: 400 prompt is too long: %w", harness.ErrContextTooLarge)}
	st := durableTurn(t, dir, durableSetup{model: model})
	if !model.done {
		t.Fatal("the model never rejected the request")
	}
	n := map[string]int{}
	for _, e := range readTurnLog(t, st).events {
		n[e]++
	}
	summary := `policy turnbudget r2  "turn evidence 66 → 40 chars: 2 of 2 results trimmed to a cap of 20 (budget 40, floor 12)"`
	if n[`request  r2  ""`] != 2 || n[summary] != 2 || n[`request  r3  ""`] != 1 {
		t.Errorf("stored %d request(s) of round 2 and %d budget summaries of them, %d of round 3; want 2, 2 and 1", n[`request  r2  ""`], n[summary], n[`request  r3  ""`])
	}
}

// lostCompletion makes the worker report the first attempt of activity
// that succeeds as failed, after it did its work: a worker whose report
// never reached the server (it died, or the network failed), so Temporal
// runs the step again.
type lostCompletion struct {
	interceptor.WorkerInterceptorBase
	activity string
	mu       sync.Mutex
	done     bool
}

func (l *lostCompletion) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &lostCompletionActivity{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, lost: l}
}

type lostCompletionActivity struct {
	interceptor.ActivityInboundInterceptorBase
	lost *lostCompletion
}

func (a *lostCompletionActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	out, err := a.Next.ExecuteActivity(ctx, in)
	if err != nil || activity.GetInfo(ctx).ActivityType.Name != a.lost.activity {
		return out, err
	}
	a.lost.mu.Lock()
	lose := !a.lost.done
	a.lost.done = true
	a.lost.mu.Unlock()
	if lose {
		return nil, errors.New("worker: the step's completion was lost")
	}
	return out, nil
}

// TestRetriedBeginTurnEvents runs BeginTurn three times: the journal write
// of the turn's tools fails once (after the selector reported), and the
// completion of the attempt that journalled them is lost (after it did
// its work). The store holds the events the in-process agent stores for
// the same turn, event for event: the turn's start and the selector's
// event and warning once; the last attempt reuses the journalled tools
// without calling the selector. Before, every attempt that reached the
// selector called it, and the store kept the events of each.
func TestRetriedBeginTurnEvents(t *testing.T) {
	want := inProcessTurnLog(t)
	sel := &reversingSelector{}
	lost := &lostCompletion{activity: htemporal.ActivityBeginTurn}
	var jr *failingJournal
	st := durableTurn(t, t.TempDir(), durableSetup{selector: sel, interceptors: []interceptor.WorkerInterceptor{lost},
		journal: func(j htemporal.Journal) htemporal.Journal {
			jr = &failingJournal{Journal: j, prefix: "tools:"}
			return jr
		}})
	got := readTurnLog(t, st)
	if !slices.Equal(got.events, want.events) {
		t.Errorf("the durable turn's stored events:\n%s\nthe in-process turn's:\n%s", strings.Join(got.events, "\n"), strings.Join(want.events, "\n"))
	}
	if n := countPrefix(got.events, "policy selector"); n != 1 {
		t.Errorf("%d selector event(s) stored, want 1", n)
	}
	if !jr.done || !lost.done || sel.calls.Load() != 2 {
		t.Errorf("the journal failed: %v, a completion was lost: %v, the selector ran %d time(s); want one failure each and two runs (the attempts before the tools were journalled)",
			jr.done, lost.done, sel.calls.Load())
	}
}

// failingEnd is the engine's recorder: the store, whose first EndTurn
// fails as a transient store error does, inside the store's own write
// (its context is cancelled, so the transaction never commits and the
// events waiting for it are kept for the store's next write).
type failingEnd struct {
	store.Store
	mu     sync.Mutex
	failed error
	done   bool
}

func (s *failingEnd) EndTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	s.mu.Lock()
	fail := !s.done
	s.done = true
	s.mu.Unlock()
	if !fail {
		return s.Store.EndTurn(ctx, conv, turn)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	err := s.Store.EndTurn(cancelled, conv, turn)
	s.mu.Lock()
	s.failed = err
	s.mu.Unlock()
	return err
}

// TestRetriedEndTurnEvents fails the store's first write of the turn's end
// (after EndTurn reported turn_end), so Temporal retries EndTurn, which
// reports turn_end again while the failed write's copy waits for the
// store's next write. On SQLite and on PostgreSQL, the store holds the
// events the in-process agent stores for the same turn, event for event,
// with one turn_end; before, it held both copies.
func TestRetriedEndTurnEvents(t *testing.T) {
	want := inProcessTurnLog(t)
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			rec := &failingEnd{}
			st := durableTurn(t, t.TempDir(), durableSetup{postgres: db == "postgres", recorder: func(st store.Store) harness.Recorder {
				rec.Store = st
				return rec
			}})
			rec.mu.Lock()
			failed := rec.failed
			rec.mu.Unlock()
			if failed == nil {
				t.Fatal("the store's first write of the turn's end did not fail")
			}
			got := readTurnLog(t, st)
			if !slices.Equal(got.events, want.events) {
				t.Errorf("the durable turn's stored events:\n%s\nthe in-process turn's:\n%s", strings.Join(got.events, "\n"), strings.Join(want.events, "\n"))
			}
			if n := countPrefix(got.events, string(harness.EventTurnEnd)+" "); n != 1 {
				t.Errorf("%d turn_end event(s) stored, want 1", n)
			}
		})
	}
}

// countPrefix counts the event keys that start with prefix.
func countPrefix(keys []string, prefix string) int {
	n := 0
	for _, k := range keys {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	return n
}
