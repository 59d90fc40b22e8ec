package replayengine

import (
	"context"
	"github.com/agentharness/harness/replay"
	"testing"

	"github.com/agentharness/harness"
)

// BenchmarkReplay measures replay speed on the trimmed trajectory: keeping
// everything, and with a per-result cut at arrival.
func BenchmarkReplay(b *testing.B) {
	rec := fixture(b)
	needles := Needles(rec)
	for _, p := range []Policy{policy("none", Config{}), policy("head", Config{Guards: []harness.Guard{headGuard(2000, true)}, Recall: true})} {
		b.Run(p.Name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Replay(context.Background(), rec, p, &Options{Needles: needles}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseMiniSWE measures importing the trimmed trajectory.
func BenchmarkParseMiniSWE(b *testing.B) {
	for b.Loop() {
		if _, err := replay.ParseFile("../../replay/testdata/pydicom-trimmed.traj.json"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNeedles measures needle extraction.
func BenchmarkNeedles(b *testing.B) {
	rec := fixture(b)
	for b.Loop() {
		Needles(rec)
	}
}
