//go:build unix

package bench

import (
	"syscall"
	"time"
)

// cpuTime is the process's CPU time so far (user + system): what a
// benchmark costs whatever else the machine is running.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
