package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentharness/harness/replay"
)

// homeTree builds a HOME-like tree from the shipped fixtures: a Claude
// Code project folder (a session, a subagent file, and the tool-results
// text Claude Code keeps beside them) and a Codex sessions folder
// (rollouts under YYYY/MM/DD).
func homeTree(t *testing.T) (claude, codex string) {
	t.Helper()
	home := t.TempDir()
	fixtures := filepath.Join("..", "..", "replay", "testdata")
	put := func(from, to string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(fixtures, from))
		if err != nil {
			t.Fatal(err)
		}
		to = filepath.Join(home, to)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	proj := ".claude/projects/-home-u-proj/"
	put("claude-code/155715ec-f4e9-47ea-859c-2e4cfcceab6f.jsonl", proj+"155715ec-f4e9-47ea-859c-2e4cfcceab6f.jsonl")
	put("claude-code/agent-a4e3ca2.jsonl", proj+"155715ec-f4e9-47ea-859c-2e4cfcceab6f/subagents/agent-a4e3ca2.jsonl")
	put("claude-code/SOURCE.md", proj+"155715ec-f4e9-47ea-859c-2e4cfcceab6f/tool-results/b1tbp1qun.txt")
	put("claude-code/SOURCE.md", proj+"155715ec-f4e9-47ea-859c-2e4cfcceab6f/tool-results/b5ngp9g5h.txt")
	put("codex/rollout-2025-11-24T12-54-04-019ab737-4612-7f91-bf54-c6a3b3870ee6.jsonl", ".codex/sessions/2025/11/24/rollout-2025-11-24T12-54-04-019ab737-4612-7f91-bf54-c6a3b3870ee6.jsonl")
	put("codex/rollout-2026-02-04T21-29-45-019c2a58-c0cc-7860-b9ca-7e2dcda03ddb.jsonl", ".codex/sessions/2026/02/04/rollout-2026-02-04T21-29-45-019c2a58-c0cc-7860-b9ca-7e2dcda03ddb.jsonl")
	// A session that was opened and closed: only its title.
	title := filepath.Join(home, proj, "0a0a0a0a-title-only.jsonl")
	if err := os.WriteFile(title, []byte(`{"type":"summary","summary":"Nothing done","leafUuid":"x"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A rollout Codex was still writing: its last line ends mid-object.
	b, err := os.ReadFile(filepath.Join(fixtures, "codex/rollout-2025-08-30T12-52-41-9aa0221f-be4a-424a-8633-55496d1e2dc3.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(home, ".codex/sessions/2025/08/30/rollout-2025-08-30T12-52-41-9aa0221f-be4a-424a-8633-55496d1e2dc3.jsonl")
	if err := os.MkdirAll(filepath.Dir(live), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(live, append(b, `{"type":"message","role":"assi`...), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(home, proj), filepath.Join(home, ".codex/sessions")
}

// TestAuditTotal: by default audit costs what bench's main table does
// (harness, the other systems and the bounds, no ablations or ideas) and
// ends with their figures over every recording of the folder; --presets
// all adds the rest.
func TestAuditTotal(t *testing.T) {
	claude, _ := homeTree(t)
	stdout, stderr, code := cli(t, "", "audit", claude)
	if code != 0 {
		t.Fatalf("audit: exit %d\n%s", code, stderr)
	}
	total := strings.Index(stdout, "== in total: 2 recordings, 9 model calls\n")
	if total < 0 {
		t.Fatalf("no total:\n%s", stdout)
	}
	for _, w := range []string{" harness ", " codex ", " floor ", " oracle ", "> 1.01×"} {
		if !strings.Contains(stdout[total:], w) {
			t.Errorf("the total lacks %q:\n%s", w, stdout[total:])
		}
	}
	if cols := headerColumns(stdout[total:]); !slices.Contains(cols, "openai") || !slices.Contains(cols, "recoverable") {
		t.Errorf("the total lacks bench's columns: %v", cols)
	}
	if strings.Contains(stdout, "harness@previous") || strings.Contains(stdout, "ablation  ") {
		t.Errorf("default presets include ablations or ideas:\n%s", stdout)
	}
	all, stderr, code := cli(t, "", "audit", claude, "--presets", "all")
	if code != 0 || !strings.Contains(all, " harness-proxy ") || !strings.Contains(all, " oracle ") {
		t.Errorf("--presets all: exit %d, harness-proxy and oracle shown %v, %v\n%s", code, strings.Contains(all, " harness-proxy "), strings.Contains(all, " oracle "), stderr)
	}
}

// TestAuditJSONTotal: audit --json carries each recording's audit and the
// total over all of them, which is their sum: the calls and each preset's
// cost under every price model.
func TestAuditJSONTotal(t *testing.T) {
	claude, _ := homeTree(t)
	stdout, stderr, code := cli(t, "", "audit", claude, "--json", "--presets", "harness,floor")
	if code != 0 {
		t.Fatalf("audit --json: exit %d\n%s", code, stderr)
	}
	type figures struct {
		Preset string             `json:"preset"`
		Calls  int                `json:"calls"`
		Costs  map[string]float64 `json:"costs"`
	}
	var report struct {
		Recordings []struct {
			Recording string    `json:"recording"`
			Presets   []string  `json:"presets"`
			Costs     []figures `json:"costs"`
		} `json:"recordings"`
		Total *struct {
			Recordings []string  `json:"recordings"`
			Presets    []figures `json:"presets"`
		} `json:"total"`
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if report.Total == nil || len(report.Recordings) != 2 || len(report.Total.Recordings) != 2 {
		t.Fatalf("%d recordings, total %+v", len(report.Recordings), report.Total)
	}
	for _, row := range report.Total.Presets {
		calls, costs := 0, map[string]float64{}
		for _, a := range report.Recordings {
			for j, name := range a.Presets {
				if name == row.Preset {
					calls += a.Costs[j].Calls
					for price, c := range a.Costs[j].Costs {
						costs[price] += c
					}
				}
			}
		}
		if calls != row.Calls || calls == 0 {
			t.Errorf("%s: total %d calls, the recordings' sum %d", row.Preset, row.Calls, calls)
		}
		for price, c := range costs {
			if d := row.Costs[price] - c; d > 1e-6*c || d < -1e-6*c {
				t.Errorf("%s under %s: total %.1f, the recordings' sum %.1f", row.Preset, price, row.Costs[price], c)
			}
		}
	}
	if n := len(report.Total.Presets); n != 3 {
		t.Errorf("the total has %d presets, want none, harness and floor", n)
	}
}

// TestAuditUserHistory runs audit on a user's own Claude Code project
// folder and Codex sessions folder: every recognised file is imported,
// the text files beside them are skipped in one line, and a summary per
// file and in total goes to standard error with the figures on standard
// output.
func TestAuditUserHistory(t *testing.T) {
	claude, codex := homeTree(t)
	for _, tc := range []struct {
		dir      string
		files    int
		contexts int
		want     []string
	}{
		{claude, 2, 2, []string{
			"skipped 2 files of whole tool outputs the agent saved beside its sessions (tool-results, tool-outputs: not transcripts",
			"imported " + filepath.Join(claude, "155715ec-f4e9-47ea-859c-2e4cfcceab6f.jsonl") + ": claude-code, 1 model contexts, 8 model calls, 5 results",
			"subagents/agent-a4e3ca2.jsonl: claude-code, 1 model contexts, 1 model calls, 0 results",
			"skipped 1 files with no model call: " + filepath.Join(claude, "0a0a0a0a-title-only.jsonl") + "\n",
			"imported 2 files (3 skipped): 2 model contexts (claude-code 2), 9 model calls",
			"warning: 2 recordings: not recorded by claude-code: the system prompt and the tool schemas",
		}},
		{codex, 3, 3, []string{
			"imported 3 files (0 skipped): 3 model contexts (codex 3), 9 model calls",
			"the last line is incomplete",
		}},
	} {
		stdout, stderr, code := cli(t, "", "audit", tc.dir, "--presets", "harness,codex")
		if code != 0 {
			t.Fatalf("audit %s: exit %d\n%s", tc.dir, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("audit %s: stderr lacks %q:\n%s", tc.dir, w, stderr)
			}
		}
		if n := strings.Count(stderr, "\nimported ") + btoi(strings.HasPrefix(stderr, "imported ")); n != tc.files+1 {
			t.Errorf("audit %s: %d summary lines, want %d files and a total:\n%s", tc.dir, n, tc.files, stderr)
		}
		if strings.Contains(stdout, "warning:") || strings.Contains(stdout, "imported ") || len(stdout) == 0 {
			t.Errorf("audit %s: stdout holds the stderr lines or nothing:\n%s", tc.dir, stdout)
		}
	}

	// --json carries each recording's warnings; supplying a system prompt
	// and tool schemas rewrites the caveat.
	sys := filepath.Join(t.TempDir(), "system.txt")
	tools := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(sys, []byte(strings.Repeat("You are Claude Code. ", 300)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tools, []byte(`[{"name":"Bash","description":"Run a command","input_schema":{"type":"object","properties":{"command":{"type":"string"}}}}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := cli(t, "", "audit", claude, "--presets", "harness", "--json", "--system-file", sys, "--tools-file", tools)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var report struct {
		Recordings []struct {
			Warnings []string `json:"warnings"`
		} `json:"recordings"`
	}
	err := json.Unmarshal([]byte(stdout), &report)
	out := report.Recordings
	if err != nil || len(out) != 2 {
		t.Fatalf("%d audits, %v", len(out), err)
	}
	all := strings.Join(out[0].Warnings, "\n")
	if !strings.Contains(all, "system prompt supplied by the user") || !strings.Contains(all, "tool schemas supplied by the user (1 tools)") || strings.Contains(all, "not recorded by") {
		t.Errorf("warnings after --system-file and --tools-file:\n%s", all)
	}

	for _, bad := range [][]string{
		{"audit", claude, "--tools-file", sys},
		{"audit", claude, "--system-file", filepath.Join(t.TempDir(), "missing.txt")},
		{"bench", claude, "--assume-system-tokens", "-3"},
	} {
		if _, stderr, code := cli(t, "", bad...); code == 0 || !strings.Contains(stderr, "--") {
			t.Errorf("%v: exit %d: %s", bad, code, stderr)
		}
	}
}

// TestReplaySupplyChangesCost: --assume-system-tokens makes every request
// of a Claude Code session larger by the stand-in.
func TestReplaySupplyChangesCost(t *testing.T) {
	claude, _ := homeTree(t)
	file := filepath.Join(claude, "155715ec-f4e9-47ea-859c-2e4cfcceab6f.jsonl")
	plain, stderr, code := cli(t, "", "replay", file, "--policy", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	more, stderr, code := cli(t, "", "replay", file, "--policy", "none", "--assume-system-tokens", "10000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	in := func(s string) int {
		var n int
		i := strings.Index(s, "tokens in ")
		if i < 0 {
			t.Fatalf("no figures: %s", s)
		}
		if _, err := fmt.Sscan(s[i+len("tokens in "):], &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// 8 model calls, each ~10,000 tokens more.
	if d := in(more) - in(plain); d < 8*9_900 || d > 8*10_100 {
		t.Errorf("the stand-in added %d input tokens over 8 calls", d)
	}
	if !strings.Contains(stderr, "a stand-in of about 10000 tokens") {
		t.Errorf("stderr: %s", stderr)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestBenchReal replays the shipped real runs: one table per agent, each
// over that agent's recordings in its own format.
func TestBenchReal(t *testing.T) {
	stdout, stderr, code := cli(t, "", "bench", "--real", "--presets", "codex", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var tabs map[string]benchJSON
	if err := json.Unmarshal([]byte(stdout), &tabs); err != nil {
		t.Fatalf("%v\n%.300s", err, stdout)
	}
	for _, agent := range []string{"mini-swe-agent", "claude-code", "codex", "swe-agent"} {
		if tab, ok := tabs[agent]; !ok || len(tab.Runs) < 5 {
			t.Errorf("%s: %d runs in its table", agent, len(tab.Runs))
		}
	}
	if tab, ok := tabs["suite"]; !ok || len(tab.Runs) != 8 {
		t.Errorf("suite: %d runs in its table", len(tab.Runs))
	}
	for _, args := range [][]string{{"--real", "somewhere"}, {"--suite", "somewhere"}, {"--suite", "--real"}} {
		if _, stderr, code := cli(t, "", append([]string{"bench"}, args...)...); code != 2 || !strings.Contains(stderr, args[0]) {
			t.Errorf("bench %v: exit %d %s", args, code, stderr)
		}
	}
}

// TestBenchMainJob is the README's first command: with no argument the
// bench replays the shipped real runs, one table per agent, then the
// suite (here under one preset: the default list is TestMainPresets').
func TestBenchMainJob(t *testing.T) {
	stdout, stderr, code := cli(t, "", "bench", "--presets", "codex")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	last := -1
	for _, head := range []string{"== mini-swe-agent, real recorded runs: ", "== claude-code, real recorded runs: ",
		"== codex, real recorded runs: ", "== swe-agent, real recorded runs: ", "== built-in scenario suite: 8 scenarios"} {
		i := strings.Index(stdout, head)
		if i <= last {
			t.Fatalf("%q missing or out of order:\n%.2000s", head, stdout)
		}
		last = i
	}
	if n := strings.Count(stdout, " codex  other system "); n != 5 {
		t.Errorf("codex is a row of %d tables, want 5", n)
	}
}

// TestMainPresets: the main job runs harness, every other system and the
// bounds floor and oracle, never an ablation or an idea (--presets all
// adds them).
func TestMainPresets(t *testing.T) {
	var got []string
	for _, p := range mainPresets() {
		got = append(got, p.Name)
	}
	want := []string{"none", "harness", "harness-rs", "claude-code", "codex", "swe-agent", "openhands", "crush",
		"anthropic-context-editing", "gemini-cli", "opencode", "floor", "oracle"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("main presets %v, want %v", got, want)
	}
	if ps, err := pickPresets("all"); err != nil || ps != nil {
		t.Errorf("--presets all: %v %v, want every preset (nil)", ps, err)
	}
}

// TestPrintWarningsGroups: a warning many recordings share is one line;
// warnings that differ only in their leading count are one line with the
// range; a warning of one recording names it.
func TestPrintWarningsGroups(t *testing.T) {
	var errb strings.Builder
	e := &env{stdout: io.Discard, stderr: &errb}
	recs := []*replay.Recording{
		{Source: "a", Warnings: []string{"not recorded by x: y", "3 thinking blocks left out", "the last line is incomplete"}},
		{Source: "b", Warnings: []string{"not recorded by x: y", "12 thinking blocks left out"}},
		{Source: "c", Warnings: []string{"not recorded by x: y", "1 thinking blocks left out"}},
	}
	printWarnings(e, recs)
	want := "warning: 3 recordings: not recorded by x: y\n" +
		"warning: 3 recordings: 1 to 12 thinking blocks left out\n" +
		"warning: a: the last line is incomplete\n"
	if errb.String() != want {
		t.Errorf("got\n%s\nwant\n%s", errb.String(), want)
	}
}

// TestAuditTurnsAnswered audits Codex rollouts and a Gemini CLI session
// log, which send their own instructions and environment as user messages
// before the prompt: the turn table counts those with the prompt they
// precede, so every turn of these sessions (each prompt answered) shows
// the requests that answered it, and the turns' requests add up to the
// recording's model calls.
func TestAuditTurnsAnswered(t *testing.T) {
	_, codex := homeTree(t)
	gemini := filepath.Join(t.TempDir(), "session-2026-12-02T04-05-62a661cc.jsonl")
	b, err := os.ReadFile(filepath.Join("..", "..", "replay", "testdata", "gemini-cli", "session-2026-12-02T04-05-62a661cc.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gemini, b, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := cli(t, "", "audit", codex, gemini, "--presets", "none")
	if code != 0 {
		t.Fatalf("audit: exit %d\n%s", code, stderr)
	}
	audits := 0
	for _, block := range strings.Split("\n"+stdout, "\n== ")[1:] {
		head, rest, _ := strings.Cut(block, "\n")
		if strings.HasPrefix(head, "in total") {
			continue
		}
		var calls int
		i := strings.Index(head, " model calls")
		if i < 0 {
			t.Fatalf("no call count in %q", head)
		}
		if _, err := fmt.Sscan(head[strings.LastIndex(head[:i], " ")+1:i], &calls); err != nil {
			t.Fatalf("no call count in %q: %v", head, err)
		}
		audits++
		table, _, _ := strings.Cut(rest, "largest results:")
		rows := strings.Split(strings.TrimSpace(table), "\n")[1:]
		sum := 0
		for _, row := range rows {
			var turn, requests int
			if _, err := fmt.Sscan(row, &turn, &requests); err != nil {
				t.Fatalf("turn row %q: %v", row, err)
			}
			if requests == 0 {
				t.Errorf("%s: turn %d shows no request:\n%s", head, turn, table)
			}
			sum += requests
		}
		if sum != calls || len(rows) == 0 {
			t.Errorf("%s: %d turns with %d requests, want the %d calls", head, len(rows), sum, calls)
		}
	}
	if audits != 4 {
		t.Errorf("%d recordings audited, want 4:\n%s", audits, stdout)
	}
}
