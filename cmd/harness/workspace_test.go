package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunWorkspaceTools drives "harness run" through the scripted model:
// the workspace tools are offered, read-only calls run, and a write runs
// only when it is approved (--yes) or allowed (--mode auto).
func TestRunWorkspaceTools(t *testing.T) {
	script := writeScript(t, `{"steps":[
		{"expect":{"tools_include":["read_file","list_dir","glob","grep","write_file","edit_file"],"tools_exclude":["shell"]},
		 "tool_calls":[{"name":"read_file","args":{"path":"in.txt"}},{"name":"write_file","args":{"path":"out.txt","content":"written\n"}}]},
		{"expect":{"contains":["     1\tfrom the workspace"]},"text":"done"}]}`)
	cases := []struct {
		name    string
		flags   []string
		written bool
		stderr  string
	}{
		{"no terminal, ask mode refuses", nil, false, "harness: refused write_file (destructive): no terminal to ask"},
		{"--yes approves", []string{"--yes"}, true, ""},
		{"--mode auto runs", []string{"--mode", "auto"}, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "in.txt"), []byte("from the workspace\n"), 0o644)
			args := append([]string{"run", "--model", "scripted:" + script, "--workspace", dir}, c.flags...)
			stdout, stderr, code := cli(t, "", append(args, "copy it")...)
			if code != 0 || strings.TrimSpace(stdout) != "done" {
				t.Fatalf("exit %d, stdout %q, stderr %s", code, stdout, stderr)
			}
			_, err := os.Stat(filepath.Join(dir, "out.txt"))
			if written := err == nil; written != c.written {
				t.Fatalf("written %v, want %v; stderr %s", written, c.written, stderr)
			}
			if !strings.Contains(stderr, c.stderr) {
				t.Fatalf("stderr lacks %q: %s", c.stderr, stderr)
			}
		})
	}
}

func TestRunWorkspaceModes(t *testing.T) {
	readOnly := writeScript(t, `{"steps":[{"expect":{"tools_include":["read_file","grep"],"tools_exclude":["write_file","edit_file","shell"]},"text":"ok"}]}`)
	if _, stderr, code := cli(t, "", "run", "--model", "scripted:"+readOnly, "--workspace", t.TempDir(), "--mode", "read-only", "--shell", "--yes", "hi"); code != 0 {
		t.Fatalf("read-only: exit %d: %s", code, stderr)
	}
	shell := writeScript(t, `{"steps":[
		{"expect":{"tools_include":["shell"]},"tool_calls":[{"name":"shell","args":{"command":"echo from-bash"}}]},
		{"expect":{"last_tool_contains":["from-bash\n[exit status 0]"]},"text":"ok"}]}`)
	if _, stderr, code := cli(t, "", "run", "--model", "scripted:"+shell, "--workspace", t.TempDir(), "--shell", "--yes", "hi"); code != 0 {
		t.Fatalf("shell: exit %d: %s", code, stderr)
	}
	if _, stderr, code := cli(t, "", "run", "--model", "scripted:"+shell, "--mode", "sometimes", "hi"); code != 2 || !strings.Contains(stderr, "read-only, auto or ask") {
		t.Fatalf("bad mode: exit %d: %s", code, stderr)
	}
}
