package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWantsTemporal(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"--temporal", "localhost:7233", "hi"}, true},
		{[]string{"-temporal=localhost:7233", "hi"}, true},
		{[]string{"--model", "scripted:x", "--temporal", "h:1", "hi"}, true},
		{[]string{"--model", "scripted:x", "hi"}, false},
		{[]string{"--", "--temporal"}, false},
	} {
		if got := wantsTemporal(tc.args); got != tc.want {
			t.Errorf("wantsTemporal(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// TestTemporalCommands checks that worker and run --temporal hand over
// to harness-temporal: without it on PATH they say how to build it; with
// it they run it with the same arguments.
func TestTemporalCommands(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("PATH", empty)
	for _, args := range [][]string{{"worker", "--temporal", "h:1"}, {"run", "--temporal", "h:1", "hi"}} {
		_, errOut, code := inproc(t, args...)
		if code != 1 || !strings.Contains(errOut, temporalBuild) {
			t.Errorf("harness %q = %d, %q; want 1 and the build command", args, code, errOut)
		}
	}
	stub := filepath.Join(empty, temporalBinary)
	if err := os.WriteFile(stub, []byte("#!/bin/sh\necho \"stub $*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := inproc(t, "run", "--temporal", "h:1", "hi")
	if code != 0 || out != "stub run --temporal h:1 hi\n" {
		t.Errorf("harness run --temporal = %d, %q, %q; want the stub's output", code, out, errOut)
	}
}
