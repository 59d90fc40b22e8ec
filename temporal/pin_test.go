package temporal_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"

	htemporal "github.com/agentharness/harness/temporal"
)

// TestPinnedToolSteps runs a turn of each of four conversations at once
// on two session-enabled workers of one task queue, whose tools record
// the worker that ran each call: every call of a turn ran on one worker,
// once. The workers dispatch no activity eagerly (an activity the
// workflow schedules is handed to the worker that ran the workflow task
// when it has a free slot, which keeps a healthy turn on one worker by
// chance, not by promise): with the tool steps unpinned, as before
// pinning, each call then goes to whichever worker polls first, and this
// test fails (three turns of four spread over both workers).
func TestPinnedToolSteps(t *testing.T) {
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	c := ts.GetDefaultClient()
	dir := t.TempDir()
	for _, name := range []string{"w1", "w2"} {
		namedWorker(t, ts, dir, "q-pin", name, true, nil)
	}
	convs := []string{"conv-1", "conv-2", "conv-3", "conv-4"}
	errs := make(chan error, len(convs))
	for _, conv := range convs {
		// The default heartbeat timeout (20 s): no worker dies here, and a
		// session whose heartbeat a loaded machine delays would move.
		go func() { errs <- runTurn(context.Background(), c, "q-pin", conv, 1) }()
	}
	for range convs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	ran, on := counts(t, dir), ranOn(t, dir)
	r, err := newRig(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	calls := 0
	for _, id := range convs {
		conv, err := r.store.Load(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		workers, by := map[string]bool{}, []string{}
		for _, rd := range conv.Turns[0].Rounds {
			for _, call := range rd.Assistant.ToolCalls {
				calls++
				key := id + "/" + call.ID
				if ran[key] != 1 || len(on[key]) != 1 {
					t.Errorf("%s ran %d time(s), on %v; want once", key, ran[key], on[key])
				}
				for _, w := range on[key] {
					workers[w] = true
					by = append(by, call.ID+" on "+w)
				}
			}
		}
		if len(workers) != 1 {
			t.Errorf("the tool calls of %s ran on %d workers, want one: %s", id, len(workers), strings.Join(by, ", "))
		}
	}
	if calls != len(ran) || calls != 5*len(convs) {
		t.Errorf("%d calls ran, %d are stored, want %d", len(ran), calls, 5*len(convs))
	}
}

// TestPinnedWorkerStops stops the worker a turn's tool steps are pinned
// to just after it journals the turn's first tool result, before that
// step reports: the session fails, the step runs again in a new session
// on the other worker, which finds the result in the journal, and the
// turn's later calls run there. The turn ends as an uninterrupted one:
// the same transcript, every call run once, the first on the stopped
// worker and none of the others.
func TestPinnedWorkerStops(t *testing.T) {
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	c := ts.GetDefaultClient()
	want := uninterrupted(t, ts, c, t.TempDir())
	dir := t.TempDir()
	first := &firstResult{conv: "conv-1", hit: make(chan string, 1), release: make(chan struct{})}
	defer close(first.release)
	workers := map[string]worker.Worker{}
	for _, name := range []string{"w1", "w2"} {
		workers[name] = namedWorker(t, ts, dir, "q-pin-stop", name, true, first.wrap(name))
	}
	run := startTurn(t, c, "q-pin-stop")
	var stopped string
	select {
	case stopped = <-first.hit:
	case err := <-run.ended:
		t.Fatalf("the turn ended (%v) before its first tool result was journalled", err)
	}
	workers[stopped].Stop()
	run.finish(t, dir, want)
	on := ranOn(t, dir)
	for i, rd := range load(t, dir).Turns[0].Rounds {
		for j, call := range rd.Assistant.ToolCalls {
			key := "conv-1/" + call.ID
			firstCall := i == 0 && j == 0
			if got := on[key]; len(got) != 1 || (got[0] == stopped) != firstCall {
				t.Errorf("%s ran on %v; the stopped worker is %s, want it to have run the first call only", key, got, stopped)
			}
		}
	}
}

// TestPinFallsBack runs a turn on a worker built without session workers
// (as before pinning, or without htemporal.WorkerOptions): no worker takes
// the turn's session within TurnInput.PinTimeout, and the turn's tool
// steps run unpinned; it ends as an uninterrupted one, each call once.
func TestPinFallsBack(t *testing.T) {
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	c := ts.GetDefaultClient()
	want := uninterrupted(t, ts, c, t.TempDir())
	dir := t.TempDir()
	namedWorker(t, ts, dir, "q-unpinned", "plain", false, nil)
	in := testInput("conv-1", "count for me")
	in.PinTimeout = 1e9 // schedule-to-start of the session: no worker polls for it
	run, err := htemporal.StartTurn(context.Background(), c, "q-unpinned", in)
	if err != nil {
		t.Fatal(err)
	}
	r := &turnRun{ended: make(chan error, 1)}
	r.ended <- run.Get(context.Background(), &r.out)
	r.finish(t, dir, want)
}

// namedWorker starts an in-process worker on queue named name (its
// identity, and the name its tools record, see ranOn) with its own rig
// in dir, session-enabled when sessions is set; wrap, when not nil, wraps
// the rig's journal.
func namedWorker(t *testing.T, ts *temporaltest.TestServer, dir, queue, name string, sessions bool, wrap func(htemporal.Journal) htemporal.Journal) worker.Worker {
	t.Helper()
	r, err := newRig(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.close)
	if wrap != nil {
		r.acts.Journal = wrap(r.acts.Journal)
	}
	// No eager activities: every step goes through the queue's matching,
	// so that only a session keeps a turn's steps on one worker.
	opts := worker.Options{Identity: name, DisableEagerActivities: true, BackgroundActivityContext: context.WithValue(context.Background(), workerKey{}, name)}
	if sessions {
		opts = htemporal.WorkerOptions(opts)
	}
	w := ts.NewWorkerWithOptions(queue, r.acts.Register, opts)
	t.Cleanup(w.Stop) // before r.close
	return w
}

// ranOn reads the workers file of the counter in dir (see recordRun):
// which workers ran each call, by conversation/call id.
func ranOn(t *testing.T, dir string) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "counter.workers"))
	if err != nil {
		t.Fatal(err)
	}
	on := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		name, key, ok := strings.Cut(l, " ")
		if !ok {
			t.Fatalf("line %q of counter.workers is not WORKER KEY", l)
		}
		on[key] = append(on[key], name)
	}
	for _, names := range on {
		slices.Sort(names)
	}
	return on
}

// firstResult holds up the first tool result journalled for conv, by
// whichever worker: once it is journalled, the worker's name goes to hit
// and the step waits for release, so it never reports before the test
// stops that worker.
type firstResult struct {
	conv    string
	once    sync.Once
	hit     chan string
	release chan struct{}
}

// wrap is the journal wrapper of the worker name.
func (f *firstResult) wrap(name string) func(htemporal.Journal) htemporal.Journal {
	return func(j htemporal.Journal) htemporal.Journal { return &holdingJournal{Journal: j, name: name, f: f} }
}

type holdingJournal struct {
	htemporal.Journal
	name string
	f    *firstResult
}

func (j *holdingJournal) Put(ctx context.Context, k htemporal.Key, v []byte) ([]byte, error) {
	out, err := j.Journal.Put(ctx, k, v)
	if err != nil || k.Conversation != j.f.conv || !strings.HasPrefix(k.Name, "call:") {
		return out, err
	}
	first := false
	j.f.once.Do(func() { first = true })
	if first {
		j.f.hit <- j.name
		<-j.f.release
		return nil, fmt.Errorf("%s was stopped", j.name)
	}
	return out, err
}
