// Package harnessdir keeps a workspace's .harness folder tidy for the CLI
// and the proxy: it removes old spill files (GCWith) and writes the
// folder's .gitignore (IgnoreHarness).
package harnessdir
