//go:build !unix

package bench

import "time"

// cpuTime is not measured here; benchmarks then report 0 CPU.
func cpuTime() time.Duration { return 0 }
