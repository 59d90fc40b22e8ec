package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/benchcore"
)

// benchJSON is the part of "bench --json" these tests read.
type benchJSON struct {
	Presets []struct {
		Preset    string  `json:"preset"`
		Effective float64 `json:"effective_tokens"`
		Ratio     float64 `json:"ratio_to_none"`
	} `json:"presets"`
	Runs []struct {
		Recording    string  `json:"recording"`
		Largest      int     `json:"largest_result_chars"`
		ResultChars  int     `json:"result_chars"`
		LargestShare float64 `json:"largest_share"`
		Heavy        bool    `json:"output_heavy"`
		Cells        []struct {
			Effective float64 `json:"effective_tokens"`
			Ratio     float64 `json:"ratio_to_none"`
		} `json:"cells"`
	} `json:"runs"`
	OutputHeavy struct {
		Recordings []string `json:"recordings"`
		Presets    []struct {
			Preset    string  `json:"preset"`
			Effective float64 `json:"effective_tokens"`
			Ratio     float64 `json:"ratio_to_none"`
			Visible   float64 `json:"visible_share"`
		} `json:"presets"`
	} `json:"output_heavy"`
}

// heavyTrajectory writes two mini-swe-agent trajectories made from the
// shipped pydicom fixture into a new folder: "light", every output cut to
// its first 3,000 characters (shown and raw) (not output-heavy), and "heavy", whose first
// command printed a 39,990-character log (output-heavy).
func heavyTrajectory(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../replay/testdata/pydicom-trimmed.traj.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"light", "heavy"} {
		var traj map[string]any
		if err := json.Unmarshal(raw, &traj); err != nil {
			t.Fatal(err)
		}
		first := true
		for _, m := range traj["messages"].([]any) {
			msg := m.(map[string]any)
			if msg["role"] != "tool" {
				continue
			}
			extra := msg["extra"].(map[string]any)
			out := extra["raw_output"].(string)
			switch {
			case name == "heavy" && first:
				out = strings.Repeat("DEBUG tokenizer state 0042 ok\n", 39_990/30)
			case name == "light":
				out = clipRunes(out, 3000)
				msg["content"] = clipRunes(msg["content"].(string), 3000)
			}
			extra["raw_output"], first = out, false
		}
		if first {
			t.Fatal("the fixture has no tool message")
		}
		traj["instance_id"] = name
		b, err := json.Marshal(traj)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".traj.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func clipRunes(s string, n int) string {
	r := []rune(s)
	return string(r[:min(n, len(r))])
}

func TestBenchPerRunThroughTheBinary(t *testing.T) {
	dir := heavyTrajectory(t)
	stdout, stderr, code := cli(t, "", "bench", dir, "--per-run", "--presets", "harness,codex")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// Not a terminal: no progress bar, nothing on standard error.
	if stderr != "" {
		t.Errorf("stderr %q", stderr)
	}
	squash := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	var perRun []string
	for _, l := range strings.Split(stdout, "\n") {
		f := strings.Fields(l)
		if len(f) >= 6 && (f[0] == "none" || f[0] == "harness" || f[0] == "codex" || strings.Contains(l, " of ")) && strings.HasSuffix(l, "%") && !strings.Contains(l, "/") {
			perRun = append(perRun, squash(l))
		}
	}
	if len(perRun) != 2*3 {
		t.Errorf("%d per-run lines, want 2 recordings × 3 presets:\n%s", len(perRun), stdout)
	}
	for _, want := range []string{"all 2 none", "output-heavy 1 none", "output-heavy (largest tool result ≥ 10,000 chars and ≥ 1/3 of all result chars): 1 of 2: heavy ("} {
		if !strings.Contains(squash(stdout), want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
	heavyLine := ""
	for _, l := range perRun {
		if strings.HasPrefix(l, "heavy ") {
			heavyLine = l
		}
	}
	if !strings.Contains(heavyLine, " yes none ") {
		t.Errorf("heavy recording line %q", heavyLine)
	}

	// The default output is the table (two header lines), the recordings
	// line, the notes on the columns and the one output-heavy line.
	def, stderr, code := cli(t, "", "bench", dir, "--presets", "harness,codex")
	if code != 0 || stderr != "" || strings.Count(def, "\n") != 2+3+1+strings.Count(benchcore.ColumnNotes, "\n")+1+1 || strings.Count(def, "output-heavy") != 1 || strings.Contains(def, "yes") {
		t.Errorf("default output: exit %d\n%s\n%s", code, def, stderr)
	}

	out, stderr, code := cli(t, "", "bench", dir, "--json", "--per-run", "--presets", "harness")
	var tab benchJSON
	if code != 0 || stderr != "" {
		t.Fatalf("--json: exit %d %s", code, stderr)
	}
	if err := json.Unmarshal([]byte(out), &tab); err != nil {
		t.Fatalf("--json: %v\n%.300s", err, out)
	}
	if len(tab.Runs) != 2 || len(tab.OutputHeavy.Recordings) != 1 || tab.OutputHeavy.Recordings[0] != "heavy" || len(tab.OutputHeavy.Presets) != 2 {
		t.Fatalf("--json: %+v", tab)
	}
	var sum, heavyNone, heavyHarness [2]float64
	for _, run := range tab.Runs {
		if math.Abs(run.LargestShare-float64(run.Largest)/float64(run.ResultChars)) > 1e-12 {
			t.Errorf("%s: share %.4f of %d/%d", run.Recording, run.LargestShare, run.Largest, run.ResultChars)
		}
		if run.Heavy != (run.Recording == "heavy") || (run.Heavy && run.Largest < 39_990) {
			t.Errorf("%s: output-heavy %v, largest %d", run.Recording, run.Heavy, run.Largest)
		}
		for p := range 2 {
			sum[p] += run.Cells[p].Effective
		}
		if run.Heavy {
			heavyNone[0] += run.Cells[0].Effective
			heavyHarness[0] += run.Cells[1].Effective
		}
	}
	for p := range 2 {
		if math.Abs(sum[p]-tab.Presets[p].Effective) > 1e-6 {
			t.Errorf("%s: Σ per-run effective %.3f, total %.3f", tab.Presets[p].Preset, sum[p], tab.Presets[p].Effective)
		}
	}
	if h := tab.OutputHeavy.Presets[1]; h.Preset != "harness" || math.Abs(h.Ratio-heavyHarness[0]/heavyNone[0]) > 1e-12 || h.Ratio >= 1 {
		t.Errorf("output-heavy harness row %+v, per-run %.0f / %.0f", h, heavyHarness[0], heavyNone[0])
	}
}

func TestProgressBarOffWithoutTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if progressBar(f) != nil {
		t.Error("a progress bar on a regular file")
	}
	var sb strings.Builder
	if progressBar(&sb) != nil {
		t.Error("a progress bar on a buffer")
	}
}

func TestBenchPricingFlag(t *testing.T) {
	dir := heavyTrajectory(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
		// cols are the price models the header names, in order, once
		// in each of its three groups (× none, removed, with re-reads).
		cols []string
	}{
		{"default openai and anthropic, floor named", []string{"bench", dir, "--presets", "harness,floor"}, 0,
			[]string{"pricing: openai, anthropic", "floor"}, []string{"openai", "anthropic"}},
		{"picked", []string{"bench", dir, "--presets", "harness", "--pricing", "nocache,openai-4.1"}, 0,
			[]string{"pricing: nocache, openai-4.1"}, []string{"nocache", "openai-4.1"}},
		{"unknown", []string{"bench", dir, "--pricing", "gemini"}, 2, []string{`unknown pricing "gemini"`}, nil},
		{"audit unknown", []string{"audit", dir, "--pricing", "openai,x"}, 2, []string{`unknown pricing "x"`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := cli(t, "", tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout+stderr, w) {
					t.Errorf("no %q in\n%s%s", w, stdout, stderr)
				}
			}
			if tc.cols == nil {
				return
			}
			var models []string
			for _, f := range headerColumns(stdout) {
				if f == "nocache" || f == "anthropic" || strings.HasPrefix(f, "openai") {
					models = append(models, f)
				}
			}
			want := strings.Join(slices.Concat(tc.cols, tc.cols, tc.cols), " ")
			if strings.Join(models, " ") != want {
				t.Errorf("header names %v, want %s\n%s", models, want, stdout)
			}
		})
	}
}

// TestBenchCacheTTL: by default the cache expires (--cache-ttl 5m) between
// requests the recording dates further apart than it, for every preset;
// --cache-ttl 0 prices it warm: a Codex rollout under a 1 ns lifetime has
// no cached prefix left, its default pricing has less cached than a warm
// one, and a trajectory that records no times keeps its own under every
// lifetime. A negative lifetime is refused as a usage error. The preset
// beside none is harness-rs, which has no clear when idle (harness's would
// itself break the prefix at the pause under every pricing).
func TestBenchCacheTTL(t *testing.T) {
	cached := func(file string, args ...string) (none, harness int) {
		t.Helper()
		stdout, stderr, code := inproc(t, append([]string{"bench", file, "--json", "--presets", "harness-rs"}, args...)...)
		if code != 0 {
			t.Fatalf("bench %v: exit %d\n%s", args, code, stderr)
		}
		var tab struct {
			Presets []struct {
				Cached int `json:"cached_tokens"`
			} `json:"presets"`
		}
		if err := json.Unmarshal([]byte(stdout), &tab); err != nil || len(tab.Presets) != 2 {
			t.Fatalf("bench --json: %v\n%s", err, stdout)
		}
		return tab.Presets[0].Cached, tab.Presets[1].Cached
	}
	rollout := "../../replay/testdata/codex/rollout-2026-02-04T21-29-45-019c2a58-c0cc-7860-b9ca-7e2dcda03ddb.jsonl"
	// A Claude Code session whose user paused 55 minutes once.
	paused := "../../bench/data/claude-code/RyanLisse__big3/logs__chat.json.6d611bf6.json"
	warmNone, warmH := cached(paused, "--cache-ttl", "0")
	defNone, defH := cached(paused)
	if n, h := cached(paused, "--cache-ttl", "5m"); n != defNone || h != defH {
		t.Errorf("paused session: --cache-ttl 5m cached %d/%d, the default %d/%d; want the same", n, h, defNone, defH)
	}
	if defNone >= warmNone || defH >= warmH {
		t.Errorf("paused session: cached none %d (warm) → %d (default), harness %d → %d; want the default colder", warmNone, defNone, warmH, defH)
	}
	if n, h := cached(paused, "--cache-ttl", "1h"); n != warmNone || h != warmH {
		t.Errorf("paused session: --cache-ttl 1h cached %d/%d, want the warm %d/%d (no pause is longer)", n, h, warmNone, warmH)
	}
	warmNone, warmH = cached(rollout, "--cache-ttl", "0")
	coldNone, coldH := cached(rollout, "--cache-ttl", "1ns")
	if warmNone == 0 || warmH == 0 || coldNone > warmNone/10 || coldH > warmH/10 {
		t.Errorf("codex rollout: cached none %d → %d, harness %d → %d; want most of it gone", warmNone, coldNone, warmH, coldH)
	}
	for _, tc := range []struct{ ttl, want string }{{"", "cache expires after 5m idle"}, {"0", "cache never expires (warm)"}, {"1h", "cache expires after 1h idle"}} {
		args := []string{"bench", rollout, "--presets", "harness"}
		if tc.ttl != "" {
			args = append(args, "--cache-ttl", tc.ttl)
		}
		if stdout, stderr, code := inproc(t, args...); code != 0 || !strings.Contains(stdout, "pricing: openai, anthropic; "+tc.want) {
			t.Errorf("bench --cache-ttl %q: exit %d, table lacks %q\n%s%s", tc.ttl, code, tc.want, stdout, stderr)
		}
	}
	if _, stderr, code := inproc(t, "bench", rollout, "--cache-ttl", "-1s"); code != 2 || !strings.Contains(stderr, "--cache-ttl -1s") {
		t.Errorf("bench --cache-ttl -1s: exit %d, want 2 and a clear message\n%s", code, stderr)
	}
	if _, stderr, code := inproc(t, "audit", rollout, "--cache-ttl", "-1s"); code != 2 || !strings.Contains(stderr, "--cache-ttl -1s") {
		t.Errorf("audit --cache-ttl -1s: exit %d, want 2 and a clear message\n%s", code, stderr)
	}
	if n, h := cached(fixture, "--cache-ttl", "1ns"); n == 0 || h == 0 {
		t.Errorf("a trajectory without times lost its cache: none %d, harness %d", n, h)
	} else if wn, wh := cached(fixture, "--cache-ttl", "0"); wn != n || wh != h {
		t.Errorf("a trajectory without times priced differently: none %d vs %d, harness %d vs %d", n, wn, h, wh)
	}
}

// headerColumns returns the column names of the first bench table in out:
// the header line that names "effective tokens", split where two or more
// spaces separate its cells.
func headerColumns(out string) []string {
	for line := range strings.SplitSeq(out, "\n") {
		if strings.Contains(line, "effective tokens") {
			return regexp.MustCompile(` {2,}`).Split(strings.TrimSpace(line), -1)
		}
	}
	return nil
}

// TestBenchCutsThroughTheBinary: --cuts adds --per-run's lines and one
// line per result a preset cut; with --json each run's cell lists them,
// and their savings sum to what the preset saved on the run when nothing
// but those cuts changed its requests.
func TestBenchCutsThroughTheBinary(t *testing.T) {
	dir := heavyTrajectory(t)
	stdout, stderr, code := cli(t, "", "bench", dir, "--cuts", "--presets", "harness")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	cuts := stdout[strings.Index(stdout, "\ncuts: ")+1:]
	if !strings.HasPrefix(cuts, "cuts: what hiding each result saved and what reading it back cost (openai") || !strings.Contains(cuts, " heavy ") ||
		!strings.Contains(cuts, " spilled ") || !strings.Contains(stdout, "re-read cost") {
		t.Errorf("no cut lines:\n%s", stdout)
	}
	out, stderr, code := cli(t, "", "bench", dir, "--json", "--cuts", "--presets", "harness")
	if code != 0 || stderr != "" {
		t.Fatalf("--json --cuts: exit %d %s", code, stderr)
	}
	var tab struct {
		Runs []struct {
			Recording string `json:"recording"`
			Cells     []struct {
				Costs map[string]float64 `json:"costs"`
				Cuts  []struct {
					Call    string             `json:"call"`
					Arrival string             `json:"arrival"`
					Saved   map[string]float64 `json:"saved"`
				} `json:"cuts"`
			} `json:"cells"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &tab); err != nil {
		t.Fatal(err)
	}
	for _, run := range tab.Runs {
		if run.Recording != "heavy" {
			continue
		}
		none, h := run.Cells[0], run.Cells[1]
		if len(none.Cuts) != 0 || len(h.Cuts) == 0 || h.Cuts[0].Arrival != "spilled" {
			t.Fatalf("heavy: none's cuts %+v, harness's %+v", none.Cuts, h.Cuts)
		}
		sum := 0.0
		for _, c := range h.Cuts {
			sum += c.Saved["openai"]
		}
		if saved := none.Costs["openai"] - h.Costs["openai"]; math.Abs(sum-saved) > 1 {
			t.Errorf("Σ cuts' savings %.1f, the run's %.1f", sum, saved)
		}
	}
}

// TestAuditCutsThroughTheBinary: audit --cuts lists, under a recording's
// presets table, the cuts of harness's presets (harness, harness-proxy),
// not the other systems'.
func TestAuditCutsThroughTheBinary(t *testing.T) {
	dir := heavyTrajectory(t)
	stdout, stderr, code := cli(t, "", "audit", "--cuts", "--presets", "harness,harness-proxy,codex", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	i := strings.Index(stdout, "\ncuts: what hiding each result saved")
	if i < 0 {
		t.Fatalf("no cuts table:\n%s", stdout)
	}
	cuts := stdout[i+1:]
	if j := strings.Index(cuts, "\n\n"); j >= 0 {
		cuts = cuts[:j] // the table ends at the recording's blank line
	}
	if !strings.Contains(cuts, " harness ") || !strings.Contains(cuts, " harness-proxy ") || !strings.Contains(cuts, " spilled ") {
		t.Errorf("cuts of harness's presets missing:\n%s", cuts)
	}
	for _, l := range strings.Split(cuts, "\n") {
		if f := strings.Fields(l); len(f) > 1 && (f[0] == "codex" || f[1] == "codex") {
			t.Errorf("a cut of another system's preset: %q", l)
		}
	}
	plain, _, code := cli(t, "", "audit", "--presets", "harness", dir)
	if code != 0 || strings.Contains(plain, "\ncuts: ") {
		t.Errorf("cuts without --cuts (exit %d)", code)
	}
}
