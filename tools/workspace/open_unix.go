//go:build unix

package workspace

import "syscall"

// openReadFlags opens without blocking: if the tree changed after absPath
// and a FIFO now stands where a file was, the open returns at once and the
// fstat check refuses it, instead of hanging the tool until a writer comes.
const openReadFlags = syscall.O_RDONLY | syscall.O_NONBLOCK
