package temporal_test

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"

	"github.com/agentharness/harness"
	htemporal "github.com/agentharness/harness/temporal"
)

var (
	scaleWorkers = flag.Int("scale.workers", 0, "TestScale: workers (0 skips the scale run; it takes minutes)")
	scaleConvs   = flag.Int("scale.convs", 50, "TestScale: concurrent conversations")
	scaleTurns   = flag.Int("scale.turns", 10, "TestScale: turns per conversation")
	scaleDB      = flag.String("scale.db", "sqlite", "TestScale: the store and journal of the workers, sqlite (one file) or postgres (one database of the throwaway cluster)")
)

// TestScale runs N workers (each its own store and journal handles on one
// SQLite file, or on one PostgreSQL database with -scale.db postgres) × M
// concurrent conversations × T turns of the scripted model on the real
// server, and reports turns per second, the turn latency and the part of
// it spent in store and journal calls (p50, p99), and the steps a busy
// conversation refused; it fails on any lost or duplicated round or call.
// Run:
//
//	cd temporal && go test -run TestScale -scale.workers 4 -scale.convs 50 -scale.turns 10 -v
//	cd temporal && go test -run TestScale -scale.workers 4 -scale.convs 50 -scale.turns 10 -scale.db postgres -v
func TestScale(t *testing.T) {
	if *scaleWorkers == 0 {
		t.Skip("the scale run takes minutes: pass -scale.workers N")
	}
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	c := ts.GetDefaultClient()
	dir := t.TempDir()
	switch *scaleDB {
	case "sqlite":
	case "postgres":
		usePostgres(t, dir)
	default:
		t.Fatalf("-scale.db %q: want sqlite or postgres", *scaleDB)
	}
	ctx := context.Background()
	clock := newStoreClock()
	for range *scaleWorkers {
		r, err := openRig(ctx, dir, nil, clock)
		if err != nil {
			t.Fatal(err)
		}
		defer r.close()
		w := ts.NewWorkerWithOptions("q-scale", r.acts.Register, htemporal.WorkerOptions(worker.Options{}))
		defer w.Stop()
	}
	var (
		mu   sync.Mutex
		lat  []time.Duration
		inDB []time.Duration
		errs []error
	)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range *scaleConvs {
		wg.Go(func() {
			conv := fmt.Sprintf("conv-%d", i)
			for turn := 1; turn <= *scaleTurns; turn++ {
				t0 := time.Now()
				err := runTurn(ctx, c, "q-scale", conv, turn)
				mu.Lock()
				lat = append(lat, time.Since(t0))
				inDB = append(inDB, clock.take(conv))
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, err := range errs {
		t.Error(err)
	}
	slices.Sort(lat)
	slices.Sort(inDB)
	p := func(d []time.Duration, q float64) time.Duration {
		return d[min(len(d)-1, int(q*float64(len(d))))].Round(time.Millisecond)
	}
	t.Logf("%s, %d workers × %d conversations × %d turns: %d turns in %s, %.2f turns/s; turn latency p50 %s, p99 %s; in store and journal calls p50 %s, p99 %s per turn; %d store calls refused busy (retried)",
		*scaleDB, *scaleWorkers, *scaleConvs, *scaleTurns, len(lat), elapsed.Round(time.Millisecond),
		float64(len(lat))/elapsed.Seconds(), p(lat, 0.5), p(lat, 0.99), p(inDB, 0.5), p(inDB, 0.99), clock.refused())
	checkScale(t, dir)
}

// runTurn runs one turn of conv on queue and checks that it answered.
func runTurn(ctx context.Context, c client.Client, queue, conv string, turn int) error {
	ctx, cancel := context.WithTimeout(ctx, hangBound)
	defer cancel()
	// The default heartbeat timeout (20 s): no worker dies here, and the
	// fault tests' 2 s is short for a machine this loaded.
	run, err := htemporal.StartTurn(ctx, c, queue, htemporal.TurnInput{Conversation: conv, Input: fmt.Sprintf("turn %d", turn)})
	if err != nil {
		return err
	}
	var out htemporal.TurnOutput
	if err := run.Get(ctx, &out); err != nil {
		return err
	}
	if out.Outcome != harness.Answered || out.Turn != turn {
		return fmt.Errorf("%s: turn %+v, want turn %d answered", conv, out, turn)
	}
	return nil
}

// checkScale fails on a lost or duplicated turn, round or call.
func checkScale(t *testing.T, dir string) {
	t.Helper()
	r, err := newRig(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	ran := counts(t, dir)
	calls := 0
	for i := range *scaleConvs {
		id := fmt.Sprintf("conv-%d", i)
		conv, err := r.store.Load(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(conv.Turns) != *scaleTurns {
			t.Errorf("%s has %d turns, want %d", id, len(conv.Turns), *scaleTurns)
		}
		for _, turn := range conv.Turns {
			if len(turn.Rounds) != 4 || turn.Outcome != harness.Answered {
				t.Errorf("%s turn %d: %d rounds, %s; want 4, answered", id, turn.Index, len(turn.Rounds), turn.Outcome)
			}
			for _, rd := range turn.Rounds {
				for _, call := range rd.Assistant.ToolCalls {
					calls++
					if n := ran[id+"/"+call.ID]; n != 1 {
						t.Errorf("%s call %s ran %d times", id, call.ID, n)
					}
				}
			}
		}
	}
	if calls != len(ran) {
		t.Errorf("%d calls ran, %d are stored", len(ran), calls)
	}
	t.Logf("%d calls stored, each ran once; 0 lost or duplicated rounds", calls)
}
