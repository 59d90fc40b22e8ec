package proxy

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness/internal/numfmt"
	"github.com/agentharness/harness/internal/wiretest"
)

// TestSavingsPageInChromium loads the proxy's page in headless Chromium
// (installed by .ci/run; where it is missing the test says so and skips,
// as bench's audit page test does) and checks that the rendered page
// shows the figures /stats reports: the totals and a row per client and
// project.
func TestSavingsPageInChromium(t *testing.T) {
	browser := chromiumPath()
	if browser == "" {
		t.Skip("no chromium: install Debian's chromium to render the savings page")
	}
	r := newRig(t, nil)
	wc := wireCases[0]
	const model = "claude-sonnet-4-5"
	read := step{id: "call_1", tool: "Bash", args: `{"command":"cat package-lock.json"}`, result: lockFile(120 << 10)}
	r.up.Enqueue(wc.reply(model, "pinned", nil, wiretest.Usage{Input: 6000, Cached: 3000, Output: 40}))
	body := strings.Replace(string(wc.body(model, "Which zod?", []step{read})), `"You are a test agent."`, `"You are a test agent.\nPrimary working directory: /home/u/shop\n"`, 1)
	if status, _, got := r.post(wc.path, []byte(body), map[string]string{"User-Agent": "claude-cli/2.1.197 (external, cli)"}); status != 200 {
		t.Fatalf("status %d: %s", status, got)
	}
	// A model the price table does not know: its row's dollars are
	// unknown (–), not $0.00, and the headline says how many tokens that
	// leaves unpriced.
	const unknown = "homebrew-7b"
	r.up.Enqueue(wc.reply(unknown, "pinned", nil, wiretest.Usage{Input: 6000, Output: 40}))
	if status, _, got := r.post(wc.path, wc.body(unknown, "Which zod here?", []step{read}), nil); status != 200 {
		t.Fatalf("status %d: %s", status, got)
	}
	if err := r.px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := getSavings(t, r.srv.URL)
	if s.TokensSaved <= 0 {
		t.Fatalf("nothing saved: %+v", s)
	}
	dom := dumpDOM(t, browser, r.srv.URL+"/")
	text := func(id string) string {
		m := regexp.MustCompile(`id="` + id + `"[^>]*>([^<]*)<`).FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("no #%s in the rendered page:\n%s", id, dom)
		}
		return m[1]
	}
	for _, tc := range []struct{ id, want string }{
		{"tokens-saved", numfmt.Thousands(s.TokensSaved)},
		{"dollars-saved", usdText(s.DollarsSaved)},
		{"saved-share", strconv.FormatFloat(100*s.SavedShare, 'f', 1, 64) + "%"},
		{"calls", numfmt.Thousands(s.Calls)},
	} {
		if got := text(tc.id); got != tc.want {
			t.Errorf("#%s shows %q, /stats says %q", tc.id, got, tc.want)
		}
	}
	for _, row := range []string{"claude-code", "/home/u/shop", model, time.Now().Format(time.DateOnly)} {
		if !strings.Contains(dom, "<td>"+row+"</td>") {
			t.Errorf("no row for %s in the rendered page", row)
		}
	}
	if !strings.Contains(dom, "harness removed "+numfmt.Thousands(s.TokensSaved)+" tokens") {
		t.Errorf("the headline was not rendered:\n%s", dom)
	}
	if s.UnpricedTokens <= 0 || !strings.Contains(dom, numfmt.Thousands(s.UnpricedTokens)+" of those tokens were saved on models the price table does not know") {
		t.Errorf("the headline does not say the %d unpriced tokens:\n%s", s.UnpricedTokens, dom)
	}
	if !regexp.MustCompile(`<td>` + unknown + `</td>(<td>[^<]*</td>){3}<td>–</td><td>–</td>`).MatchString(dom) {
		t.Errorf("the row of %s does not show its dollars as –:\n%s", unknown, dom)
	}
}

// usdText formats dollars as the page's script does (en-US, 2 digits).
func usdText(d float64) string {
	cents := int64(d*100 + 0.5)
	return fmt.Sprintf("$%s.%02d", numfmt.Thousands(cents/100), cents%100)
}

// chromiumPath returns the browser's path, or "" when it is not
// installed (CHROMIUM overrides the lookup).
func chromiumPath() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// dumpDOM loads url in a headless, throw-away Chromium and returns the
// DOM after the page's scripts ran.
func dumpDOM(t *testing.T, browser, url string) string {
	t.Helper()
	// Only a hang may stop the browser: a loaded machine starts it slowly.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--dump-dom", url}
	cmd := exec.CommandContext(ctx, browser, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return string(out)
}
