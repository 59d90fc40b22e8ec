//go:build unix

package workspace

import (
	"io/fs"
	"syscall"
)

// linkCount returns the number of hard links of fi's file (1 when the
// platform does not say).
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
