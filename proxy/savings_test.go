package proxy

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/provider/catalog"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/sqlite"
	"github.com/agentharness/harness/tokens"
)

// TestSummarizeSavings sums constructed savings by day, client, project
// and model, pricing each group at its model's list price with the cached
// share its upstream reported.
func TestSummarizeSavings(t *testing.T) {
	day := time.Date(2026, 12, 4, 23, 30, 0, 0, time.UTC)
	sonnet := catalog.Price{Input: 3, CachedInput: 0.3, Output: 15}
	gpt := catalog.Price{Input: 1.25, CachedInput: 0.125, Output: 10}
	rows := []store.Saving{
		// Two calls of one group: 75% of its input was cached.
		{At: day, Client: "claude-code", Project: "/a", Model: "claude-sonnet-4-5-20250929", TokensSaved: 10_000, Input: 30_000, Cached: 20_000, Output: 100},
		{At: day.Add(10 * time.Minute), Client: "claude-code", Project: "/a", Model: "claude-sonnet-4-5-20250929", TokensSaved: 30_000, Input: 10_000, Cached: 10_000, Output: 100},
		// The next day (UTC), no usage reported: priced uncached.
		{At: day.Add(time.Hour), Client: "codex", Project: "/b", Model: "gpt-5", TokensSaved: 8_000},
		// A model no price knows.
		{At: day.Add(2 * time.Hour), Client: "codex", Project: "", Model: "mystery-1", TokensSaved: 500, Input: 1_000},
	}
	g1 := 40_000 * (0.25*sonnet.Input + 0.75*sonnet.CachedInput) / 1e6
	g1spent := sonnet.Cost(40_000, 30_000, 200)
	g2 := 8_000 * gpt.Input / 1e6
	for _, tc := range []struct {
		name string
		loc  *time.Location
		days []SavingsRow
	}{
		{"utc", time.UTC, []SavingsRow{
			{Name: "2026-12-04", Calls: 2, TokensSaved: 40_000, TokensSent: 40_000, SavedShare: 0.5, DollarsSaved: g1, DollarsSpent: g1spent},
			{Name: "2026-12-05", Calls: 2, TokensSaved: 8_500, TokensSent: 1_000, SavedShare: 8_500.0 / 9_500, DollarsSaved: g2},
		}},
		{"two hours east", time.FixedZone("east", 2*3600), []SavingsRow{
			{Name: "2026-12-05", Calls: 4, TokensSaved: 48_500, TokensSent: 41_000, SavedShare: 48_500.0 / 89_500, DollarsSaved: g1 + g2, DollarsSpent: g1spent},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := SummarizeSavings(rows, nil, tc.loc)
			if r.Calls != 4 || r.TokensSaved != 48_500 || r.TokensSent != 41_000 || r.UnpricedTokens != 500 {
				t.Errorf("totals: calls %d, saved %d, sent %d, unpriced %d; want 4, 48500, 41000, 500", r.Calls, r.TokensSaved, r.TokensSent, r.UnpricedTokens)
			}
			if !near(r.DollarsSaved, g1+g2) || !near(r.DollarsSpent, g1spent) || !near(r.SavedShare, 48_500.0/89_500) {
				t.Errorf("dollars saved %v spent %v share %v; want %v, %v, %v", r.DollarsSaved, r.DollarsSpent, r.SavedShare, g1+g2, g1spent, 48_500.0/89_500)
			}
			checkRows(t, "by day", r.ByDay, tc.days)
			checkRows(t, "by client", r.ByClient, []SavingsRow{
				{Name: "claude-code", Calls: 2, TokensSaved: 40_000, TokensSent: 40_000, SavedShare: 0.5, DollarsSaved: g1, DollarsSpent: g1spent},
				{Name: "codex", Calls: 2, TokensSaved: 8_500, TokensSent: 1_000, SavedShare: 8_500.0 / 9_500, DollarsSaved: g2},
			})
			checkRows(t, "by project", r.ByProject, []SavingsRow{
				{Name: "/a", Calls: 2, TokensSaved: 40_000, TokensSent: 40_000, SavedShare: 0.5, DollarsSaved: g1, DollarsSpent: g1spent},
				{Name: "/b", Calls: 1, TokensSaved: 8_000, SavedShare: 1, DollarsSaved: g2},
				{Name: "", Calls: 1, TokensSaved: 500, TokensSent: 1_000, SavedShare: 1.0 / 3},
			})
		})
	}
	if r := SummarizeSavings(nil, nil, nil); r.Calls != 0 || r.SavedShare != 0 || len(r.ByDay) != 0 {
		t.Errorf("no savings: %+v", r)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func checkRows(t *testing.T, name string, got, want []SavingsRow) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %+v, want %+v", name, got, want)
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Name != w.Name || g.Calls != w.Calls || g.TokensSaved != w.TokensSaved || g.TokensSent != w.TokensSent ||
			!near(g.SavedShare, w.SavedShare) || !near(g.DollarsSaved, w.DollarsSaved) || !near(g.DollarsSpent, w.DollarsSpent) {
			t.Errorf("%s row %d: %+v, want %+v", name, i, g, w)
		}
	}
}

// TestProjectOf reads the working directory each client states in its
// requests, as the JSON of the request carries it.
func TestProjectOf(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"claude code", `{"system":[{"type":"text","text":"<env>\nPrimary working directory: /home/u/app\nIs a git repository: true"}]}`, "/home/u/app"},
		{"codex", `{"input":[{"type":"message","content":[{"text":"<environment_context>\n  <cwd>/repo/sub</cwd>\n"}]}]}`, "/repo/sub"},
		{"gemini cli", `{"contents":[{"parts":[{"text":"- **Workspace Directories:**\n  - /work/proj\n- **Directory Structure:**"}]}]}`, "/work/proj"},
		{"opencode", `{"messages":[{"content":"<env>\n  Working directory: /srv/site\n  Is directory a git repo: yes"}]}`, "/srv/site"},
		{"windows", `{"system":"Primary working directory: C:\\Users\\me\\app\nx"}`, `C:\Users\me\app`},
		{"at the end of a string", `{"system":"Primary working directory: /p"}`, "/p"},
		{"none", `{"system":"You are a test agent."}`, ""},
		{"empty value", `{"system":"Primary working directory: \n"}`, ""},
	} {
		if got := projectOf([]byte(tc.body)); got != tc.want {
			t.Errorf("%s: projectOf = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestClientOf names the client by its User-Agent, and by the wire
// format when the agent is unknown.
func TestClientOf(t *testing.T) {
	for _, tc := range []struct {
		ua   string
		f    wireFormat
		want string
	}{
		{"claude-cli/2.1.197 (external, cli)", anthropicFormat{}, "claude-code"},
		{"codex_cli_rs/0.171.0 (Debian 12; x86_64)", responsesFormat{}, "codex"},
		{"codex_exec/0.171.0", responsesFormat{}, "codex"},
		{"GeminiCLI/0.61.0/gemini-2.5-pro (linux; x64)", geminiFormat{}, "gemini-cli"},
		{"opencode/1.18.33 ai-sdk/provider-utils/4.0.40 runtime/bun/1.3.14", chatFormat{}, "opencode"},
		{"curl/8.0", chatFormat{}, "openai-chat"},
		{"", anthropicFormat{}, "anthropic"},
	} {
		if got := clientOf(tc.ua, tc.f); got != tc.want {
			t.Errorf("clientOf(%q) = %q, want %q", tc.ua, got, tc.want)
		}
	}
}

// TestSavingsAcrossRestart: the tokens a proxy's cut saved are counted
// with the BPE tokenizer, grouped by client and project in /stats, and
// still there, with what a second proxy saves added, after the first
// proxy stops and a second starts on the same SQLite file.
func TestSavingsAcrossRestart(t *testing.T) {
	wc := wireCases[0]
	r := newRig(t, nil)
	const model = "claude-sonnet-4-5"
	hdr := map[string]string{"User-Agent": "claude-cli/2.1.197 (external, cli)"}
	withDir := func(b []byte) []byte {
		return []byte(strings.Replace(string(b), `"You are a test agent."`, `"You are a test agent.\nPrimary working directory: /home/u/app\n"`, 1))
	}
	read := step{id: "call_1", tool: "Bash", args: `{"command":"cat package-lock.json"}`, result: lockFile(100 << 10)}
	r.up.Enqueue(
		wc.reply(model, "", []wiretest.Call{{ID: read.id, Name: read.tool, Args: read.args}}, wiretest.Usage{Input: 1000, Cached: 0, Output: 20}),
		wc.reply(model, "pinned", nil, wiretest.Usage{Input: 9000, Cached: 1000, Output: 30}),
	)
	for _, b := range [][]byte{wc.body(model, "Which zod?", nil), wc.body(model, "Which zod?", []step{read})} {
		if status, _, got := r.post(wc.path, withDir(b), hdr); status != 200 {
			t.Fatalf("status %d: %s", status, got)
		}
	}
	if err := r.px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The tokens saved: the result as sent minus the copy forwarded.
	bpe, err := tokens.O200k()
	if err != nil {
		t.Fatal(err)
	}
	reqs := r.up.Requests()
	sent := contents(t, wc.format, reqs[1].Body)[0]
	var shown string
	if err := json.Unmarshal([]byte(sent), &shown); err != nil {
		t.Fatal(err)
	}
	want := int64(bpe.Count(read.result) - bpe.Count(shown))
	if want < 10_000 {
		t.Fatalf("the cut saved %d tokens: the fixture should be cut", want)
	}
	first := getSavings(t, r.srv.URL)
	if first.Calls != 2 || first.TokensSaved != want || first.TokensSent != 10_000 {
		t.Fatalf("savings: calls %d, saved %d, sent %d; want 2, %d, 10000", first.Calls, first.TokensSaved, first.TokensSent, want)
	}
	wantDollars := float64(want) * (0.9*3 + 0.1*0.3) / 1e6 // the second call's input was 10% cached
	if !near(first.DollarsSaved, wantDollars) {
		t.Errorf("dollars saved %v, want %v", first.DollarsSaved, wantDollars)
	}
	if len(first.ByClient) != 1 || first.ByClient[0].Name != "claude-code" || len(first.ByProject) != 1 || first.ByProject[0].Name != "/home/u/app" {
		t.Errorf("by client %+v, by project %+v: want claude-code, /home/u/app", first.ByClient, first.ByProject)
	}

	// Restart: close the proxy and the store, open both again.
	r.srv.Close()
	if err := r.px.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(context.Background(), r.dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	px, err := New(&Options{Upstream: r.up.URL, Store: st, Workspace: r.ws})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	srv := httptest.NewServer(px)
	t.Cleanup(srv.Close)
	if again := getSavings(t, srv.URL); !reflect.DeepEqual(again, first) {
		t.Fatalf("after a restart: %+v\nbefore: %+v", again, first)
	}
	r.srv = srv
	r.up.Enqueue(wc.reply(model, "hi", nil, wiretest.Usage{Input: 50, Output: 5}))
	if status, _, got := r.post(wc.path, withDir(wc.body(model, "Say hi.", nil)), hdr); status != 200 {
		t.Fatalf("status %d: %s", status, got)
	}
	if err := px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if after := getSavings(t, srv.URL); after.Calls != 3 || after.TokensSaved != want || after.TokensSent != 10_050 {
		t.Errorf("after a call through the second proxy: calls %d, saved %d, sent %d; want 3, %d, 10050", after.Calls, after.TokensSaved, after.TokensSent, want)
	}
}

// TestSavingsWithoutStore: a proxy without a store counts its savings in
// memory, and the page at / carries the same figures as /stats.
func TestSavingsWithoutStore(t *testing.T) {
	wc := wireCases[1]
	up := wiretest.New(t)
	px, err := New(&Options{Upstream: up.URL, Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	srv := httptest.NewServer(px)
	t.Cleanup(srv.Close)
	r := &rig{t: t, up: up, px: px, srv: srv}
	read := step{id: "call_1", tool: "exec_command", args: `{"cmd":"cat package-lock.json"}`, result: lockFile(100 << 10)}
	up.Enqueue(wc.reply("gpt-5", "done", nil, wiretest.Usage{Input: 4000, Cached: 2000, Output: 10}))
	if status, _, got := r.post(wc.path, wc.body("gpt-5", "Which zod?", []step{read}), map[string]string{"User-Agent": "codex_cli_rs/0.171.0"}); status != 200 {
		t.Fatalf("status %d: %s", status, got)
	}
	if err := px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := getSavings(t, srv.URL)
	if s.Calls != 1 || s.TokensSaved <= 10_000 || len(s.ByClient) != 1 || s.ByClient[0].Name != "codex" || s.DollarsSaved <= 0 {
		t.Fatalf("savings without a store: %+v", s)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("/ is %q", ct)
	}
	_, data, ok := strings.Cut(string(page), `<script id="initial" type="application/json">`)
	data, _, ok2 := strings.Cut(data, "</script>")
	var carried Stats
	if !ok || !ok2 || json.Unmarshal([]byte(data), &carried) != nil || carried.Savings == nil || !reflect.DeepEqual(*carried.Savings, s) {
		t.Errorf("the page carries %q, want the /stats savings %+v", data, s)
	}
	for _, banned := range []string{"http://", "https://", "src=", "@import", "<link"} {
		if strings.Contains(strings.ToLower(pageHTML), banned) {
			t.Errorf("the page loads something from elsewhere (%q)", banned)
		}
	}
}

// getSavings reads /stats and returns its savings.
func getSavings(t *testing.T, base string) SavingsReport {
	t.Helper()
	resp, err := http.Get(base + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s Stats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	if s.Savings == nil {
		t.Fatal("/stats has no savings")
	}
	return *s.Savings
}
