//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Process is the process's CPU time so far (user + system), or 0 when
// the system cannot say.
func Process() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
