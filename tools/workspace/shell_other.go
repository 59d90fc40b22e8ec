//go:build !unix

package workspace

import (
	"context"
	"errors"
	"io"
	"time"
)

// startShell needs process groups; this platform has none.
func startShell(ctx context.Context, dir, command string, env []string, timeout time.Duration) (io.ReadCloser, error) {
	return nil, errors.New("the shell tool needs a Unix system (process groups)")
}
