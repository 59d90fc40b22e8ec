package bench

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentharness/harness/replay"
)

// TestRunIsOrderIndependent checks that parallel replays give the table a
// single worker gives, byte for byte, and the table runReports (which
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
	tab, reports, err := runReports(context.Background(), Options{Presets: ps, Workers: 3}, recs)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(tab); string(got) != want {
		t.Error("runReports' table differs from Run's")
	}
	if len(reports) != len(recs) || len(reports[0]) != len(ps) || reports[len(recs)-1][len(ps)-1] == nil {
		t.Errorf("runReports kept %d × %d reports", len(reports), len(reports[0]))
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
	watch := Preset{Name: "watch", build: func(env replay.Env) (*replay.Config, error) {
		i, _ := strconv.Atoi(env.Model)
		mu.Lock()
		started = max(started, i)
		worst = max(worst, started-folded+1)
		mu.Unlock()
		return none.build(env)
	}}
	const workers = 2
	err := replayAll(context.Background(), Options{Workers: workers}, recs, []Preset{none, watch}, false, func(r int, reps []*replay.Report) {
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
	broken := Preset{Name: "broken", build: func(replay.Env) (*replay.Config, error) {
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
