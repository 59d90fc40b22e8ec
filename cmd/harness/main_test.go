package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain lets the test binary act as the harness command, so end-to-end
// tests run the real CLI in its own process without a separate build.
func TestMain(m *testing.M) {
	if os.Getenv("HARNESS_TEST_AS_CLI") == "1" {
		if dir := os.Getenv("HARNESS_LOAD_CPUPROFILE"); dir != "" {
			profiledMain(dir)
		}
		main()
		return
	}
	code := m.Run()
	pgServer.Stop()
	os.Exit(code)
}

// cli runs the harness command in a child process.
func cli(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "HARNESS_TEST_AS_CLI=1")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// inproc runs the CLI in this process.
func inproc(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = runMain(context.Background(), args, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb})
	return out.String(), errb.String(), code
}

func writeScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunPrintsAnswerAndUsage(t *testing.T) {
	script := writeScript(t, `{"steps":[{"expect":{"contains":["What is 2+2?"]},"text":"Four."}]}`)
	stdout, stderr, code := cli(t, "", "run", "--model", "scripted:"+script, "--workspace", t.TempDir(), "What is 2+2?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.TrimSpace(stdout) != "Four." {
		t.Fatalf("stdout %q", stdout)
	}
	if !strings.Contains(stderr, "usage: outcome answered; 1 requests, 0 tool rounds; tokens in ") {
		t.Fatalf("stderr %q has no usage line", stderr)
	}
}

func TestRunReadsPromptFromStdinAndPrintsJSON(t *testing.T) {
	script := writeScript(t, `{"steps":[{"expect":{"contains":["from stdin"]},"text":"ok"}]}`)
	stdout, stderr, code := cli(t, "a prompt from stdin\n", "run", "-", "--json", "--workspace", t.TempDir(), "--model", "scripted:"+script)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out struct {
		Outcome  string `json:"outcome"`
		Answer   string `json:"answer"`
		Requests int    `json:"requests"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	if out.Outcome != "answered" || out.Answer != "ok" || out.Requests != 1 {
		t.Fatalf("%+v", out)
	}
}

func TestRunErrorsSayWhatToDo(t *testing.T) {
	script := writeScript(t, `{"steps":[{"expect":{"contains":["banana"]},"text":"x"}]}`)
	t.Chdir(t.TempDir()) // the default workspace is ".": keep its store out of the tree
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no model", []string{"run", "hi"}, 2, "--model is required"},
		{"no prompt", []string{"run", "--model", "scripted:" + script}, 2, "no prompt"},
		{"bad model spec", []string{"run", "--model", "gpt", "hi"}, 2, "want PROVIDER:NAME"},
		{"unknown provider", []string{"run", "--model", "llama:7b", "hi"}, 2, `unknown provider "llama"`},
		{"missing script", []string{"run", "--model", "scripted:/nonexistent.json", "hi"}, 1, "no such file"},
		{"departure", []string{"run", "--model", "scripted:" + script, "apple"}, 1, "departed from the script"},
		{"bad workspace", []string{"run", "--model", "scripted:" + script, "--workspace", "/nonexistent", "hi"}, 1, "not a directory"},
		{"unknown flag", []string{"run", "--nope"}, 2, "unknown flag --nope"},
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := inproc(t, c.args...)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d (want %d), stderr %q (want %q)", code, c.code, stderr, c.want)
			}
		})
	}
}

func TestHelpAndVersion(t *testing.T) {
	stdout, _, code := inproc(t, "help")
	if code != 0 || !strings.Contains(stdout, "run ") || !strings.Contains(stdout, "version") {
		t.Fatalf("help: %d %q", code, stdout)
	}
	// Help asked for is output: on standard output, exit 0.
	for args, want := range map[string]string{"run -h": "run", "help run": "run", "bench --help": "bench", "log show -h": "log show"} {
		stdout, stderr, code := inproc(t, strings.Fields(args)...)
		if code != 0 || !strings.Contains(stdout, "Usage: harness "+want) || stderr != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		stdout, _, code := cli(t, "", args...)
		if code != 0 || !strings.HasPrefix(stdout, "harness ") {
			t.Fatalf("%v: %d %q", args, code, stdout)
		}
	}
}

// A mistyped flag or command gets one line on standard error, naming the
// nearest name, and exit 2 — not the command's whole usage.
func TestMistakesGetOneLine(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		want   string
		absent string
	}{
		{[]string{"run", "--modle", "openai:x", "hi"}, "harness run: unknown flag --modle (did you mean --model?)", ""},
		{[]string{"run", "--worksapce", ".", "hi"}, "(did you mean --workspace?)", ""},
		{[]string{"bench", "--preset", "harness"}, "(did you mean --presets?)", ""},
		{[]string{"run", "--xyzzy"}, "harness run: unknown flag --xyzzy (harness run -h lists the flags)", "did you mean"},
		{[]string{"rnu", "hi"}, `harness: unknown command "rnu" (did you mean run?)`, ""},
		// With no history named, where the agents keep theirs.
		{[]string{"audit"}, "harness audit: want the history to audit: a folder or file of sessions (~/.claude/projects/DIR, ~/.codex/sessions,", "usage:"},
		{[]string{"replay"}, "harness replay: want exactly one FILE", "replay: replay"},
		{[]string{"replay", "x.jsonl", "--policy", "nope"}, `harness replay: --policy: no preset "nope"`, "bench:"},
		{[]string{"bench", "--presets", "nope"}, `harness bench: no preset "nope"`, "bench: bench:"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, stderr, code := inproc(t, tc.args...)
			if code != 2 || stdout != "" {
				t.Fatalf("exit %d, stdout %q", code, stdout)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q, want one line with %q", stderr, tc.want)
			}
			if tc.absent != "" && strings.Contains(stderr, tc.absent) {
				t.Errorf("stderr %q has %q", stderr, tc.absent)
			}
		})
	}
}

func TestDidYouMean(t *testing.T) {
	names := []string{"model", "mode", "workspace", "max-rounds", "max-bytes", "json"}
	for word, want := range map[string]string{
		"modle": "model", "mdoel": "model", "mode": "mode", "modl": "mode", "workspcae": "workspace",
		"max-round": "max-rounds", "jsno": "json", "js": "", "xyzzy": "", "": "",
	} {
		got := didYouMean(word, names, "--")
		if want == "" && got != "" || want != "" && got != " (did you mean --"+want+"?)" {
			t.Errorf("didYouMean(%q) = %q, want %q", word, got, want)
		}
	}
}

// FuzzEditDistance checks the distance's laws on any pair of names.
func FuzzEditDistance(f *testing.F) {
	f.Add("modle", "model")
	f.Add("", "run")
	f.Add("workspace", "worksapce")
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 64 || len(b) > 64 {
			return
		}
		d := editDistance(a, b)
		if d != editDistance(b, a) || d < max(len(a), len(b))-min(len(a), len(b)) || d > max(len(a), len(b)) || (d == 0) != (a == b) {
			t.Fatalf("editDistance(%q, %q) = %d", a, b, d)
		}
	})
}

// TestReadmeDemo runs the README's scripted demo as written: the script's
// expectations check every request the agent builds.
func TestReadmeDemo(t *testing.T) {
	// A copy of the workspace, so the run's store stays out of the tree.
	ws := filepath.Join(t.TempDir(), "workspace")
	if err := os.CopyFS(ws, os.DirFS("../../examples/demo/workspace")); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := cli(t, "", "run", "--model", "scripted:../../examples/demo/script.json",
		"--workspace", ws, "Which version of zod does this project lock?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "zod 4.6.7") || !strings.Contains(stderr, "usage: outcome answered; 3 requests, 2 tool rounds") {
		t.Fatalf("stdout %q\nstderr %q", stdout, stderr)
	}
}

// A result over the ceiling is spilled: the usage line counts it, the file
// holds the full page, and the model's copy names the path.
func TestRunSpillsAndReportsIt(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "workspace")
	if err := os.CopyFS(ws, os.DirFS("../../examples/demo/workspace")); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, `{"steps":[
		{"tool_calls":[{"id":"big","name":"read_file","args":{"path":"package-lock.json","limit":200}}]},
		{"expect":{"last_tool_contains":["/big-read_file.txt","read_file"]},"text":"done"}]}`)
	_, stderr, code := cli(t, "", "run", "--model", "scripted:"+script, "--workspace", ws, "--max-bytes", "2048", "read the lock file")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "1 results, 1 cut (1 spilled)") {
		t.Fatalf("usage line does not count the spill: %s", stderr)
	}
	files, _ := filepath.Glob(filepath.Join(ws, ".harness/spill/*/big-read_file.txt"))
	if len(files) != 1 {
		t.Fatalf("spill files: %v", files)
	}
	spilled, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(spilled), `"lockfileVersion": 3`) || len(spilled) <= 2048 {
		t.Fatalf("spill file holds %d bytes", len(spilled))
	}
}

// TestCacheTTLHelp: --cache-ttl's help says what the default stands for
// and what 1h and 0 price, for each command that takes it.
func TestCacheTTLHelp(t *testing.T) {
	for _, cmd := range []string{"bench", "audit", "replay"} {
		stdout, _, code := inproc(t, cmd, "-h")
		help := strings.Join(strings.Fields(stdout), " ")
		for _, want := range []string{"The default is Anthropic's default lifetime and the shortest OpenAI documents;",
			"1h prices Anthropic's 1-hour cache and OpenAI's longest automatic one; 0 a warm cache that never expires.", "(default 5m0s)"} {
			if code != 0 || !strings.Contains(help, want) {
				t.Errorf("harness %s -h: exit %d, lacks %q", cmd, code, want)
			}
		}
	}
}

// TestHelpHasNoEmptySections: each command's -h has no trailing blanks
// and lists "Flags:" only when the command has some (harness version has
// none).
func TestHelpHasNoEmptySections(t *testing.T) {
	for _, c := range commands() {
		if c.name == "worker" { // harness-temporal's help, when it is installed
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := inproc(t, c.name, "-h")
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			for _, l := range strings.Split(stdout, "\n") {
				if strings.TrimRight(l, " \t") != l {
					t.Errorf("line with trailing blanks: %q", l)
				}
			}
			if strings.HasSuffix(strings.TrimSpace(stdout), "Flags:") {
				t.Errorf("an empty Flags: section:\n%s", stdout)
			}
		})
	}
}
