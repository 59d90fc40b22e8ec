//go:build !unix

package cputime

import "time"

// Process is not measured here: it is always 0, and benchmarks report 0
// CPU.
func Process() time.Duration { return 0 }
