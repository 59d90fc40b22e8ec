// Package mcptest finds the real MCP reference servers the end-to-end
// tests run against: pinned in .ci/mcp/package.json and installed
// project-locally by .ci/run (npm ci --prefix .ci/mcp).
package mcptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// InstallHint says how to install the pinned servers.
const InstallHint = "install the pinned MCP test servers with: npm ci --prefix .ci/mcp"

// Server returns the entry point (dist/index.js) of the reference server
// @modelcontextprotocol/PKG, looked for under .ci/mcp/node_modules in the
// working directory and each of its parents. Without node or the package
// the test is skipped, and fails under CI=true: in CI the servers are
// installed, so a skip would hide a broken install.
func Server(t testing.TB, pkg string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		Missing(t, "node is not on PATH")
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, ".ci", "mcp", "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			Missing(t, "@modelcontextprotocol/"+pkg+" is not installed under .ci/mcp/node_modules")
			return ""
		}
		dir = parent
	}
}

// Missing skips the test for why, or fails it under CI=true.
func Missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; %s", why, InstallHint)
	}
	t.Skipf("%s; %s", why, InstallHint)
}
