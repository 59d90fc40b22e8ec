package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestProxyFlags: the proxy refuses to start without an upstream, with one
// that is not http(s), or on a non-loopback address unless asked.
func TestProxyFlags(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"proxy"}, 2, "--upstream URL is required"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--listen", "0.0.0.0:0"}, 2, "not a loopback address"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--listen", "nonsense"}, 2, "--listen"},
		{[]string{"proxy", "--upstream", "ftp://x", "--listen", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "h.db")}, 1, "want an http or https URL"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--clear-when-idle", "soon"}, 2, `want auto, off or a duration`},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--clear-when-idle", "-5m"}, 2, `--clear-when-idle -5m0s: want auto, off or a positive duration`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := runMain(context.Background(), tc.args, &env{stdout: &out, stderr: &errb})
			if code != tc.code || !strings.Contains(errb.String(), tc.want) {
				t.Errorf("exit %d, want %d; stderr %q, want %q", code, tc.code, errb.String(), tc.want)
			}
		})
	}
}

func TestProxySpillRoot(t *testing.T) {
	tests := []struct{ dir, workspace, want string }{
		{"", "/w", "/w"},
		{"/data/x", "/w", "/data/x"},
		{"/data/x/.harness/spill", "/w", "/data/x"},
		{"/data/x/.harness/spill/", "/w", "/data/x"},
	}
	for _, tc := range tests {
		if got := proxySpillRoot(tc.dir, tc.workspace); got != tc.want {
			t.Errorf("proxySpillRoot(%q, %q) = %q, want %q", tc.dir, tc.workspace, got, tc.want)
		}
	}
}
