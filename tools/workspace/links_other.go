//go:build !unix

package workspace

import "io/fs"

// linkCount returns 1: on these platforms fs.FileInfo does not carry the
// link count, so hard links are not detected.
func linkCount(fs.FileInfo) uint64 { return 1 }
