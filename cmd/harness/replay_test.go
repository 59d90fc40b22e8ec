package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const fixture = "../../replay/testdata/pydicom-trimmed.traj.json"

func TestReplayEmitsCallAndResultLines(t *testing.T) {
	out := filepath.Join(t.TempDir(), "e.jsonl")
	stdout, stderr, code := inproc(t, "replay", fixture, "--policy", "codex", "--emit", out)
	if code != 0 || !strings.Contains(stdout, "under codex: 8 model calls") || !strings.Contains(stdout, "effective") {
		t.Fatalf("code %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	calls, results := 0, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		switch m["kind"] {
		case "call":
			calls++
			for _, k := range []string{"index", "input_tokens", "cached_tokens", "evidence_chars", "shown"} {
				if _, ok := m[k]; !ok {
					t.Errorf("call line without %s: %s", k, sc.Text())
				}
			}
			if len(m) != 6 {
				t.Errorf("call line has extra fields: %s", sc.Text())
			}
			for _, s := range m["shown"].([]any) {
				st := s.([]any)[1].(string)
				if !strings.Contains("whole trimmed spilled deduped cleared", st) {
					t.Errorf("state %q", st)
				}
			}
		case "result":
			results++
			if len(m) != 5 || m["model_text"] == nil || m["full_chars"].(float64) <= 0 {
				t.Errorf("result line: %.200s", sc.Text())
			}
			// Codex cuts the 10,305-character output: the model saw less.
			if fc := m["full_chars"].(float64); fc > 10000 && !strings.Contains(m["model_text"].(string), "tokens truncated") {
				t.Errorf("the large result was not cut by codex's rule")
			}
		default:
			t.Errorf("unknown line %s", sc.Text())
		}
	}
	if calls != 8 || results != 7 {
		t.Errorf("%d call lines and %d result lines, want 8 and 7", calls, results)
	}
}

func TestReplayUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"replay"},
		{"replay", fixture, "--policy", "nope"},
		{"bench", "--presets", "nope"},
		{"audit"},
	} {
		if _, stderr, code := inproc(t, args...); code != 2 || stderr == "" {
			t.Errorf("%v: code %d stderr %q", args, code, stderr)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte("[{\"role\": \"user\", \"content\": \"x\"},\n {\"role\": 7}]"), 0o644)
	if _, stderr, code := inproc(t, "replay", bad); code != 1 || !strings.Contains(stderr, "bad.json:2:") {
		t.Errorf("bad file: code %d stderr %q", code, stderr)
	}
}

func TestBenchAndAudit(t *testing.T) {
	stdout, stderr, code := inproc(t, "bench", "--suite", "--presets", "harness,codex")
	if code != 0 || !strings.Contains(stdout, "harness") || !strings.Contains(stdout, "8 recordings") || strings.Contains(stderr, "\r") {
		t.Fatalf("bench: code %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, _, code = inproc(t, "bench", "../../replay/testdata", "--json", "--presets", "harness")
	var tab struct {
		Presets []struct {
			Preset string  `json:"preset"`
			Ratio  float64 `json:"ratio_to_none"`
		} `json:"presets"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &tab) != nil || len(tab.Presets) != 2 || tab.Presets[0].Ratio != 1 {
		t.Fatalf("bench --json: code %d %.300s", code, stdout)
	}
	page := filepath.Join(t.TempDir(), "audit.html")
	stdout, stderr, code = inproc(t, "audit", fixture, "--html", page, "--presets", "harness")
	if code != 0 || !strings.Contains(stdout, "largest results") || !strings.Contains(stdout, "repeated reads") {
		t.Fatalf("audit: code %d\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil || !strings.Contains(string(b), "<svg") {
		t.Fatalf("html: %v", err)
	}
}

// TestReplayBenchAuditStore records two conversations with "harness run"
// into a workspace's store, then replays, benches and audits the store.
func TestReplayBenchAuditStore(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte(strings.Repeat("the parser handles ERR_tokenizer_eof at line 42\n", 800)), 0o644); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, `{"steps":[
		{"tool_calls":[{"name":"read_file","args":{"path":"notes.txt"}}]},
		{"tool_calls":[{"name":"grep","args":{"pattern":"ERR_tokenizer_eof","path":"notes.txt","max_matches":1}}]},
		{"text":"It is ERR_tokenizer_eof."}]}`)
	for i := 0; i < 2; i++ {
		if _, stderr, code := inproc(t, "run", "--model", "scripted:"+script, "--workspace", ws, "what does the parser report?"); code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, code, stderr)
		}
	}
	db := filepath.Join(ws, ".harness", "harness.db")
	stdout, stderr, code := inproc(t, "replay", db, "--policy", "harness")
	if code != 0 || strings.Count(stdout, " under harness: 3 model calls") != 2 {
		t.Fatalf("replay: code %d\n%s\n%s", code, stdout, stderr)
	}
	id := strings.Fields(stdout)[0]
	out := filepath.Join(t.TempDir(), "e.jsonl")
	if _, stderr, code := inproc(t, "replay", db, "--emit", out); code != 2 || !strings.Contains(stderr, "--conversation") {
		t.Errorf("--emit on two conversations: code %d %s", code, stderr)
	}
	if stdout, stderr, code := inproc(t, "replay", db, "--conversation", id, "--emit", out); code != 0 || strings.Count(stdout, "\n") != 1 {
		t.Errorf("--conversation: code %d %s %s", code, stdout, stderr)
	}
	stdout, stderr, code = inproc(t, "bench", db, "--presets", "harness")
	if code != 0 || !strings.Contains(stdout, "2 recordings") || stderr != "" {
		t.Fatalf("bench: code %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = inproc(t, "audit", db, "--presets", "harness")
	if code != 0 || strings.Count(stdout, "harness-store") != 2 {
		t.Fatalf("audit: code %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestReplayPricesTheCacheAsBench: harness replay prices the prompt cache
// as bench does (--cache-ttl, default 5 minutes) and tells the preset the
// lifetime. On a shipped Claude Code session that pauses longer than 5
// minutes, harness's idle clear used to be priced with the cache warm,
// 1.21 × none; under every lifetime it now costs no more than none.
func TestReplayPricesTheCacheAsBench(t *testing.T) {
	const session = "../../bench/data/claude-code/RyanLisse__big3/logs__chat.json.6d611bf6.json"
	effective := func(ttl, policy string) float64 {
		t.Helper()
		args := []string{"replay", session, "--policy", policy}
		if ttl != "" {
			args = append(args, "--cache-ttl", ttl)
		}
		stdout, stderr, code := inproc(t, args...)
		_, after, ok := strings.Cut(stdout, "effective ")
		var v float64
		if ok {
			_, err := fmt.Sscanf(after, "%f", &v)
			ok = err == nil
		}
		note := "cache expires after 5m idle"
		switch ttl {
		case "0":
			note = "cache never expires (warm)"
		case "1h":
			note = "cache expires after 1h idle"
		}
		if !strings.Contains(stdout, note) {
			t.Errorf("%v: the line does not say %q:\n%s", args, note, stdout)
		}
		if code != 0 || !ok {
			t.Fatalf("%v: exit %d, no effective tokens:\n%s%s", args, code, stdout, stderr)
		}
		return v
	}
	warmNone := effective("0", "none")
	for _, ttl := range []string{"", "0", "1h"} {
		none, h := effective(ttl, "none"), effective(ttl, "harness")
		if h > 1.01*none {
			t.Errorf("--cache-ttl %q: harness %.1f effective tokens, %.3f × none's %.1f", ttl, h, h/none, none)
		}
		if cold := ttl == ""; cold != (none > warmNone) {
			t.Errorf("--cache-ttl %q: none costs %.1f, warm %.1f: want more only under the 5-minute default", ttl, none, warmNone)
		}
	}
	if _, stderr, code := inproc(t, "replay", session, "--cache-ttl", "-1m"); code != 2 || !strings.Contains(stderr, "--cache-ttl -1m0s") {
		t.Errorf("--cache-ttl -1m: exit %d, %q; want a usage error", code, stderr)
	}
}
