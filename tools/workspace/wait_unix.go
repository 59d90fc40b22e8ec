//go:build unix && !linux

package workspace

// waitExit would wait for pid to exit without reaping it; only Linux has
// waitid(WNOWAIT) in golang.org/x/sys, so elsewhere the caller reaps first
// and kills the group after.
func waitExit(pid int) bool { return false }
