//go:build unix

package cputime

import "testing"

// TestProcessGrows: CPU time spent between two readings shows in the
// second (the work is CPU-bound, so no wall clock is involved).
func TestProcessGrows(t *testing.T) {
	before := Process()
	if before <= 0 {
		t.Fatalf("Process() = %v, want the CPU this test binary has used so far", before)
	}
	x := 0
	for i := range 50_000_000 {
		x ^= i
	}
	if after := Process(); after < before {
		t.Fatalf("CPU time went back: %v then %v (%d)", before, after, x)
	}
}
