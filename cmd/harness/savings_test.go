package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness/internal/numfmt"
	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/proxy"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/sqlite"
)

// TestSavingsCommand prints what a store's savings add up to, as text and
// as JSON, filtered by --since, with the figures SummarizeSavings computes.
func TestSavingsCommand(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "harness.db")
	st, err := sqlite.Open(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	rows := []store.Saving{
		{At: now.Add(-72 * time.Hour), Conversation: "c1", Client: "codex", Project: "/old", Model: "gpt-5", TokensSaved: 9_000, Input: 20_000, Cached: 10_000},
		{At: now.Add(-2 * time.Hour), Conversation: "c2", Client: "claude-code", Project: "/home/u/app", Model: "claude-sonnet-4-5", TokensSaved: 120_000, Input: 300_000, Cached: 250_000, Output: 900},
		{At: now.Add(-time.Hour), Conversation: "c2", Client: "claude-code", Project: "/home/u/app", Model: "claude-sonnet-4-5", TokensSaved: 30_000, Input: 310_000, Cached: 300_000, Output: 500},
		{At: now.Add(-time.Hour), Conversation: "c3", Client: "gemini-cli", Model: "homebrew-7b", TokensSaved: 1_000, Input: 2_000},
	}
	for _, v := range rows {
		if err := st.AddSaving(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	stored := func(since time.Time) []store.Saving {
		var out []store.Saving
		for _, v := range rows {
			if !v.At.Before(since) {
				v.At = v.At.UTC().Round(0)
				out = append(out, v)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		args  []string
		since time.Time
	}{
		{"everything", nil, time.Time{}},
		{"since a day ago", []string{"--since", "1d"}, now.Add(-24 * time.Hour)},
		{"since 3 hours ago", []string{"--since", "3h"}, now.Add(-3 * time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := proxy.SummarizeSavings(stored(tc.since), nil, time.Local)
			if got := savingsJSON(t, append([]string{"--db", db}, tc.args...)...); !reflect.DeepEqual(got, want) {
				t.Errorf("--json: %+v\nwant %+v", got, want)
			}
			text, errOut, code := runWithEnv(t, nil, append([]string{"savings", "--db", db}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			head := "harness removed " + numfmt.Thousands(want.TokensSaved) + " tokens (" + percent(want.SavedShare) +
				" of what your agents would have sent), about " + dollars(want.DollarsSaved) + " at list prices, over " + numfmt.Thousands(want.Calls) + " model calls"
			if !strings.HasPrefix(text, head) {
				t.Errorf("text starts %q, want %q", firstLine(text), head)
			}
			for _, r := range append(append(append([]proxy.SavingsRow{}, want.ByDay...), want.ByClient...), want.ByProject...) {
				name := r.Name
				if name == "" {
					name = "(not stated)"
				}
				line := name + "  "
				if !strings.Contains(text, line) || !strings.Contains(text, rowDollars(r, r.DollarsSaved)) || !strings.Contains(text, numfmt.Thousands(r.TokensSaved)) {
					t.Errorf("no row for %q (%s tokens, %s) in:\n%s", name, numfmt.Thousands(r.TokensSaved), rowDollars(r, r.DollarsSaved), text)
				}
			}
			if want.UnpricedTokens > 0 && !strings.Contains(text, numfmt.Thousands(want.UnpricedTokens)+" of those tokens were saved on models the price table does not know") {
				t.Errorf("the unpriced tokens are not said:\n%s", text)
			}
		})
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"bad since", []string{"savings", "--db", db, "--since", "last week"}, 2, "--since"},
		{"no store", []string{"savings", "--db", filepath.Join(t.TempDir(), "none.db")}, 1, "no transcript store"},
		{"bad prices", []string{"savings", "--db", db, "--prices", filepath.Join(t.TempDir(), "none.json")}, 1, "catalog: prices"},
		{"nothing since", []string{"savings", "--db", db, "--since", "1m"}, 0, "No savings recorded"},
	} {
		out, errOut, code := runWithEnv(t, nil, tc.args...)
		if code != tc.code || !strings.Contains(out+errOut, tc.says) {
			t.Errorf("%s: exit %d, %q %q; want exit %d saying %q", tc.name, code, out, errOut, tc.code, tc.says)
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestParseSince reads dates and times ago.
func TestParseSince(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.Local)
	for _, tc := range []struct {
		in   string
		want time.Time
		err  bool
	}{
		{"", time.Time{}, false},
		{"7d", now.AddDate(0, 0, -7), false},
		{"12h", now.Add(-12 * time.Hour), false},
		{"2026-12-01", time.Date(2026, 12, 1, 0, 0, 0, 0, time.Local), false},
		{"-3d", time.Time{}, true},
		{"-1h", time.Time{}, true},
		{"yesterday", time.Time{}, true},
	} {
		got, err := parseSince(tc.in, now)
		if (err != nil) != tc.err || !got.Equal(tc.want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// TestSavingsClaudeCode runs the real Claude Code through harness proxy:
// the cut of the file it read is in harness savings, under claude-code
// and the folder Claude Code ran in.
func TestSavingsClaudeCode(t *testing.T) {
	bin := clientBin(t, "claude")
	var r *e2eRig
	ready := make(chan struct{})
	r = startE2E(t, func(req wiretest.Request) wiretest.Reply {
		<-ready
		if req.Method != http.MethodPost || !strings.HasSuffix(req.Path, "/v1/messages") {
			return notModelCall(req)
		}
		m := bodyJSON(t, req.Body)
		model, _ := m["model"].(string)
		u := wiretest.Usage{Input: len(req.Body) / 4, Output: 20}
		if tools, _ := m["tools"].([]any); len(tools) == 0 {
			return wiretest.AnthropicStream(model, "ok", nil, u)
		}
		if !bytes.Contains(req.Body, []byte(`"type":"tool_result"`)) {
			return wiretest.AnthropicStream(model, "", []wiretest.Call{{ID: "call_lock", Name: "Read",
				Args: `{"file_path":` + mustJSONString(filepath.Join(r.work, "package-lock.json")) + `,"limit":1200}`}}, u)
		}
		return wiretest.AnthropicStream(model, e2eAnswer, nil, u)
	})
	close(ready)
	runClient(t, r.work, []string{
		"HOME=" + t.TempDir(), "ANTHROPIC_BASE_URL=" + r.addr, "ANTHROPIC_API_KEY=sk-test-claude-savings",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1",
	}, bin, "-p", "Which version of zod does package-lock.json pin?", "--output-format", "json", "--allowedTools", "Read")
	r.shutdown(t)
	rep := savingsJSON(t, "--db", r.db)
	if rep.TokensSaved < 1_000 || rep.DollarsSaved <= 0 {
		t.Errorf("saved %d tokens, $%v: the cut of the lock file should show", rep.TokensSaved, rep.DollarsSaved)
	}
	if len(rep.ByClient) != 1 || rep.ByClient[0].Name != "claude-code" {
		t.Errorf("by client %+v, want claude-code only", rep.ByClient)
	}
	work, _ := filepath.EvalSymlinks(r.work)
	var projects []string
	for _, p := range rep.ByProject {
		projects = append(projects, p.Name)
	}
	if len(projects) == 0 || (projects[0] != r.work && projects[0] != work) {
		t.Errorf("projects %q, want %s first", projects, r.work)
	}
}

// TestSavingsUnpricedDollars: a row whose calls were all on models the
// price table does not know shows its dollars as – (unknown), not $0.00;
// when no call is priced, the headline says so instead of "about $0.00".
func TestSavingsUnpricedDollars(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	priced := store.Saving{At: now.Add(-time.Hour), Conversation: "c1", Client: "claude-code", Project: "/p", Model: "claude-sonnet-4-5", TokensSaved: 120_000, Input: 300_000, Cached: 250_000, Output: 900}
	unpriced := store.Saving{At: now.Add(-time.Hour), Conversation: "c2", Client: "codex", Project: "/p", Model: "homebrew-7b", TokensSaved: 40_000, Input: 50_000, Output: 100}
	for _, tc := range []struct {
		name     string
		rows     []store.Saving
		head     string
		dashRows []string // rows whose two dollar columns are –
		absent   string
	}{
		{"mixed", []store.Saving{priced, unpriced}, "about $", []string{"codex ", "homebrew-7b "},
			""},
		{"none priced", []store.Saving{unpriced}, "harness removed 40,000 tokens (44.4% of what your agents would have sent) on models the price table does not know (--prices FILE adds them), over 1 model calls.",
			[]string{"codex ", "homebrew-7b ", "/p ", unpriced.At.Local().Format(time.DateOnly) + " "}, "$"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "harness.db")
			st, err := sqlite.Open(ctx, db, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range tc.rows {
				if err := st.AddSaving(ctx, v); err != nil {
					t.Fatal(err)
				}
			}
			st.Close()
			text, errOut, code := runWithEnv(t, nil, "savings", "--db", db)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if !strings.Contains(firstLine(text), tc.head) {
				t.Errorf("headline %q, want %q", firstLine(text), tc.head)
			}
			for _, name := range tc.dashRows {
				var line string
				for _, l := range strings.Split(text, "\n") {
					if strings.HasPrefix(l, name) {
						line = l
					}
				}
				if f := strings.Fields(line); len(f) < 2 || f[len(f)-1] != "–" || f[len(f)-2] != "–" {
					t.Errorf("row %q: %q, want its dollars as – –\n%s", name, line, text)
				}
			}
			if tc.absent != "" && strings.Contains(text, tc.absent) {
				t.Errorf("the text has %q:\n%s", tc.absent, text)
			}
		})
	}
}

// TestSavingsCommandTenant: --tenant keeps one proxy tenant's calls, as
// its /stats does, and a tenant with none has nothing to print.
func TestSavingsCommandTenant(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "harness.db")
	st, err := sqlite.Open(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	const alice, bob = "t0123456789abcdef", "tfedcba9876543210"
	now := time.Now().Add(-time.Hour).UTC().Round(0)
	rows := []store.Saving{
		{At: now, Conversation: alice + "-px-1", Client: "claude-code", Model: "claude-sonnet-4-5", TokensSaved: 50_000, Input: 80_000},
		{At: now, Conversation: bob + "-px-2", Client: "codex", Model: "gpt-5", TokensSaved: 7_000, Input: 9_000},
		{At: now, Conversation: alice + "-px-3", Client: "claude-code", Model: "claude-sonnet-4-5", TokensSaved: 1_000, Input: 90_000},
	}
	for _, v := range rows {
		if err := st.AddSaving(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	want := proxy.SummarizeSavings([]store.Saving{rows[0], rows[2]}, nil, time.Local)
	if got := savingsJSON(t, "--db", db, "--tenant", alice); !reflect.DeepEqual(got, want) {
		t.Errorf("--tenant %s: %+v\nwant %+v", alice, got, want)
	}
	out, errOut, code := runWithEnv(t, nil, "savings", "--db", db, "--tenant", "t0000000000000000")
	if code != 0 || !strings.Contains(out, "No savings recorded") {
		t.Errorf("a tenant with no calls: exit %d, printed %q %q", code, out, errOut)
	}
}

// savingsJSON runs "harness savings --json" with args and returns the
// report it printed, failing t when it exits non-zero or prints no report.
func savingsJSON(t *testing.T, args ...string) proxy.SavingsReport {
	t.Helper()
	out, errOut, code := runWithEnv(t, nil, append([]string{"savings", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got proxy.SavingsReport
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json printed %q: %v", out, err)
	}
	return got
}
