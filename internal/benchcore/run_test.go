package benchcore

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentharness/harness/replay"
)

// TestRunIsOrderIndependent checks that parallel replays give the table a
// single worker gives, byte for byte, and the table RunReports (which
// keeps every report) gives.
func TestRunIsOrderIndependent(t *testing.T) {
	recs := suiteRecs(t, "lockfile", "build-log-tail", "stuck-loop", "overlapping-reads")
	var ps []Preset
	for _, n := range []string{"none", "harness", "codex", "floor"} {
		p, err := Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	var want string
	for _, workers := range []int{1, 3} {
		tab, err := Run(context.Background(), recs, &Options{Presets: ps, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(tab)
		if want == "" {
			want = string(got)
			continue
		}
		if string(got) != want {
			t.Errorf("%d workers: the table differs from one worker's", workers)
		}
	}
	tab, reports, err := RunReports(context.Background(), Options{Presets: ps, Workers: 3}, recs)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(tab); string(got) != want {
		t.Error("RunReports' table differs from Run's")
	}
	if len(reports) != len(recs) || len(reports[0]) != len(ps) || reports[len(recs)-1][len(ps)-1] == nil {
		t.Errorf("RunReports kept %d × %d reports", len(reports), len(reports[0]))
	}
}

// TestReplayAllStreams checks that recordings are folded in order and that
// no more than Workers + 1 of them are open (replayed but not yet folded)
// at any time, however many there are.
func TestReplayAllStreams(t *testing.T) {
	small := suiteRecs(t, "stuck-loop")[0]
	var recs []*replay.Recording
	for i := range 16 {
		rec := *small
		rec.ID, rec.Model = rec.ID+"-"+strconv.Itoa(i), strconv.Itoa(i)
		recs = append(recs, &rec)
	}
	none, _ := Lookup("none")
	var (
		mu              sync.Mutex
		started, folded = -1, 0
		worst           int
	)
	watch := Preset{Name: "watch", Build: func(env replay.Env) (*replay.Config, error) {
		i, _ := strconv.Atoi(env.Model)
		mu.Lock()
		started = max(started, i)
		worst = max(worst, started-folded+1)
		mu.Unlock()
		return none.Build(env)
	}}
	const workers = 2
	err := ReplayAll(context.Background(), Options{Workers: workers}, Slice(recs), len(recs), []Preset{none, watch}, false, func(r int, _ *replay.Recording, reps []*replay.Report) {
		mu.Lock()
		defer mu.Unlock()
		if r != folded {
			t.Errorf("folded recording %d, want %d", r, folded)
		}
		if len(reps) != 2 || reps[0] == nil || reps[1] == nil || reps[1].Recording != recs[r].ID {
			t.Errorf("recording %d folded with reports %v", r, reps)
		}
		folded++
	})
	if err != nil {
		t.Fatal(err)
	}
	if folded != len(recs) || worst > workers+1 {
		t.Errorf("folded %d of %d; at worst %d recordings open (at most %d)", folded, len(recs), worst, workers+1)
	}
}

// TestRunStopsOnError checks that a failing replay ends the run with its
// error, naming the recording and the preset, and leaves no worker behind.
func TestRunStopsOnError(t *testing.T) {
	recs, err := Suite()
	if err != nil {
		t.Fatal(err)
	}
	broken := Preset{Name: "broken", Build: func(replay.Env) (*replay.Config, error) {
		return nil, errors.New("no such stack")
	}}
	_, err = Run(context.Background(), recs, &Options{Presets: []Preset{broken}, Workers: 3})
	if err == nil || !strings.Contains(err.Error(), "under broken") || !strings.Contains(err.Error(), "no such stack") {
		t.Fatalf("err = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, recs, &Options{Workers: 2}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err = %v", err)
	}
}

// TestRunEachReadsAsItGoes checks that RunEach takes a recording from its
// source only once a slot is free (at most Workers + 1 held: recording k
// is asked for only after k − Workers recordings were fully replayed),
// gives Run's table, and ends with the source's error.
func TestRunEachReadsAsItGoes(t *testing.T) {
	small := suiteRecs(t, "stuck-loop")[0]
	var recs []*replay.Recording
	for i := range 12 {
		rec := *small
		rec.ID = rec.ID + "-" + strconv.Itoa(i)
		recs = append(recs, &rec)
	}
	none, _ := Lookup("none")
	harness, _ := Lookup("harness")
	const workers = 2
	var finished atomic.Int64
	opts := &Options{Presets: []Preset{none, harness}, Workers: workers, Progress: func(done, _ int) { finished.Store(int64(done)) }}
	src := func(ctx context.Context, yield func(*replay.Recording) error) error {
		for k, rec := range recs {
			if need := (k - workers) * 2; finished.Load() < int64(need) {
				t.Errorf("recording %d asked for after %d replays, want at least %d", k, finished.Load(), need)
			}
			if err := yield(rec); err != nil {
				return err
			}
		}
		return nil
	}
	got, err := RunEach(context.Background(), src, 0, opts)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Run(context.Background(), recs, &Options{Presets: opts.Presets, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := tableJSON(t, got), tableJSON(t, want); a != b {
		t.Errorf("RunEach's table differs from Run's:\n%s\n%s", a, b)
	}
	broken := errors.New("disk gone")
	_, err = RunEach(context.Background(), func(ctx context.Context, yield func(*replay.Recording) error) error {
		if err := yield(recs[0]); err != nil {
			return err
		}
		return broken
	}, 0, opts)
	if !errors.Is(err, broken) {
		t.Fatalf("source error: err = %v", err)
	}
}

func tableJSON(t *testing.T, tab *Table) string {
	t.Helper()
	b, err := json.Marshal(tab)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
