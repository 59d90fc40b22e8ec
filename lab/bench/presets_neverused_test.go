package benchlab

import (
	"context"
	"testing"

	"github.com/agentharness/harness/internal/replayengine"
	"github.com/agentharness/harness/replay"
)

// TestNeverUsedPresets: a test script's output of about 2 KB (under the
// default run ceiling's 3 KiB) stays whole under harness, so the later
// call quoting a line from its middle needs no re-read; the lower run
// ceilings cut it at arrival and the replay prices the round that reads
// the line back from the spill file. An output of about 1.2 KB is cut
// only by harness+runceiling/512; a file print of the same 2 KB is no
// program's output and is never cut.
func TestNeverUsedPresets(t *testing.T) {
	run2k := paysRecording("bash", [2]string{"python test_fix.py", linesAt(32, 16)})
	run1k := paysRecording("bash", [2]string{"python test_fix.py", linesAt(20, 10)})
	print2k := paysRecording("bash", [2]string{"cat notes.txt", linesAt(32, 16)})
	for _, c := range []struct {
		name, preset string
		rounds       int
	}{
		{"run2k", "harness", 0}, {"run2k", "harness+runceiling/1k", 1}, {"run2k", "harness+runceiling/512", 1},
		{"run1k", "harness", 0}, {"run1k", "harness+runceiling/1k", 0}, {"run1k", "harness+runceiling/512", 1},
		{"print2k", "harness+runceiling/512", 0},
	} {
		rec := map[string]*replay.Recording{"run2k": run2k, "run1k": run1k, "print2k": print2k}[c.name]
		t.Run(c.preset+" "+c.name, func(t *testing.T) {
			p, err := Lookup(c.preset)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := replayengine.Replay(context.Background(), rec, p.Policy(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Needles != 1 || len(rep.Recoveries) != c.rounds || len(rep.Unrecovered) != 0 {
				t.Errorf("%d needles, %d recovery rounds, %d unrecovered; want 1, %d, 0", rep.Needles, len(rep.Recoveries), len(rep.Unrecovered), c.rounds)
			}
		})
	}
}
