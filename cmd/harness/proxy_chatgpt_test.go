package main

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness/internal/wiretest"
)

// chatGPTLogin writes a CODEX_HOME signed in with ChatGPT, as codex login
// leaves it: auth.json in chatgpt mode with an id token naming the
// account and a plan, and an access token good for a month (Codex reads
// the claims without checking the signature, and refreshes nothing that
// young); config.toml points the built-in OpenAI provider at base, as a
// user of a running proxy does. It returns the home and the access token.
func chatGPTLogin(t *testing.T, base string) (home, token string) {
	t.Helper()
	seg := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	now := time.Now()
	claims := map[string]any{"email": "dev@example.invalid", "iat": now.Unix(), "exp": now.Add(30 * 24 * time.Hour).Unix(),
		"https://api.openai.com/auth": map[string]any{"chatgpt_plan_type": "plus", "chatgpt_account_id": "acc-harness-test", "chatgpt_user_id": "user-1"}}
	token = seg(map[string]string{"alg": "RS256", "typ": "JWT"}) + "." + seg(claims) + ".c2lnbmF0dXJl"
	auth := map[string]any{"auth_mode": "chatgpt", "OPENAI_API_KEY": nil, "last_refresh": now.UTC().Format(time.RFC3339),
		"tokens": map[string]string{"id_token": token, "access_token": token, "refresh_token": "rt-harness-test", "account_id": "acc-harness-test"}}
	home = t.TempDir()
	b, _ := json.Marshal(auth)
	config := "model = \"gpt-test\"\nopenai_base_url = \"" + base + "/v1\"\ntool_output_token_limit = 100000\n" +
		"\n[features]\nplugins = false\nremote_plugin = false\napps = false\n\n[analytics]\nenabled = false\n"
	if err := os.WriteFile(filepath.Join(home, "auth.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return home, token
}

// TestProxyCodexChatGPT runs Codex signed in with ChatGPT through the
// proxy. Its model calls carry a ChatGPT token, which the API refuses, and
// a ChatGPT-Account-Id header: the proxy sends them to ChatGPT's backend
// (here a loopback one under /backend-api/codex, the OpenAI upstream a
// closed port), without the /v1 of the base URL Codex was given, and cuts
// the lock file as for any Codex run; the token is forwarded, never
// stored.
func TestProxyCodexChatGPT(t *testing.T) {
	bin := clientBin(t, "codex")
	var accounts []string
	r := startE2EUp(t, func(req wiretest.Request) wiretest.Reply {
		if req.Method != http.MethodPost || req.Path != "/backend-api/codex/responses" {
			return notModelCall(req)
		}
		accounts = append(accounts, req.Header.Get("ChatGPT-Account-Id"))
		m := bodyJSON(t, req.Body)
		model, _ := m["model"].(string)
		u := wiretest.Usage{Input: len(req.Body) / 4, Output: 20}
		return codexStep(req, model, u)
	}, func(up string) []string {
		return []string{"--upstream", "openai=http://127.0.0.1:9/v1,chatgpt=" + up + "/backend-api/codex"}
	})
	home, token := chatGPTLogin(t, r.addr)
	out := runClient(t, r.work, []string{"HOME=" + t.TempDir(), "CODEX_HOME=" + home},
		bin, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json", "Which version of zod does package-lock.json pin? Read it with cat.")
	if !strings.Contains(out, e2eAnswer) {
		t.Fatalf("codex did not give the scripted answer; output:\n%s", tail(out, 3000))
	}
	if len(accounts) < 3 || accounts[0] != "acc-harness-test" {
		t.Errorf("ChatGPT's backend got %d model calls, accounts %q", len(accounts), accounts)
	}
	r.checkLockResult(t, resultContents(t, r.up.Requests(), responsesOutput("call_lock")))
	noCredentialStored(t, r.db, token)
}
