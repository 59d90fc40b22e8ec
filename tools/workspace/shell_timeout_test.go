package workspace

import (
	"testing"
	"time"
)

// TestShellTimeoutUnder: the shell stops before the agent's tool timeout,
// so the model gets the output so far.
func TestShellTimeoutUnder(t *testing.T) {
	for _, c := range []struct{ tool, want time.Duration }{
		{0, defaultShellTimeout},
		{2 * time.Minute, defaultShellTimeout},
		{defaultShellTimeout, defaultShellTimeout * 9 / 10},
		{10 * time.Second, 9 * time.Second},
	} {
		if got := ShellTimeoutUnder(c.tool); got != c.want {
			t.Errorf("ShellTimeoutUnder(%s) = %s, want %s", c.tool, got, c.want)
		}
	}
}
