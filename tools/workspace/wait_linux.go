//go:build linux

package workspace

import (
	"errors"

	"golang.org/x/sys/unix"
)

// waitExit blocks until process pid exits, without reaping it: while it is
// a zombie its pid (and so its process group id) cannot be reused, which
// makes the group kill that follows safe.
// It reports false if the wait failed, in which case the caller reaps the
// process itself.
func waitExit(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			return true
		}
		if !errors.Is(err, unix.EINTR) {
			return false
		}
	}
}
