package proxy

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestParseUpstreams: a bare URL takes every request, a keyed list routes
// each family to its URL and the others to the public endpoints, and a
// URL without a scheme or an unknown family is refused with the fix.
func TestParseUpstreams(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{in: "http://127.0.0.1:9102", want: "http://127.0.0.1:9102"},
		{in: "http://h/x?a=b", want: "http://h/x?a=b"},
		{in: "", want: "anthropic=https://api.anthropic.com,openai=https://api.openai.com/v1,gemini=https://generativelanguage.googleapis.com,chatgpt=https://chatgpt.com/backend-api/codex,codeassist=https://cloudcode-pa.googleapis.com"},
		{in: "openai=http://127.0.0.1:2/v1, anthropic=http://127.0.0.1:1",
			want: "anthropic=http://127.0.0.1:1,openai=http://127.0.0.1:2/v1,gemini=https://generativelanguage.googleapis.com,codeassist=https://cloudcode-pa.googleapis.com"},
		{in: "chatgpt=http://127.0.0.1:3/backend-api/codex",
			want: "anthropic=https://api.anthropic.com,openai=https://api.openai.com/v1,gemini=https://generativelanguage.googleapis.com,chatgpt=http://127.0.0.1:3/backend-api/codex,codeassist=https://cloudcode-pa.googleapis.com"},
		{in: "127.0.0.1:9102", err: `"127.0.0.1:9102" has no scheme: write http://127.0.0.1:9102 (or https://127.0.0.1:9102)`},
		{in: "anthropic=localhost:1", err: `"localhost:1" has no scheme`},
		{in: "ftp://x", err: "want an http or https URL"},
		{in: "mistral=http://x", err: `"mistral" is not anthropic, openai, gemini, chatgpt or codeassist`},
		{in: "gemini=http://x,gemini=http://y", err: "gemini is named twice"},
	}
	for _, tc := range tests {
		ups, err := parseUpstreams(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("parseUpstreams(%q) error %v, want %q", tc.in, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("parseUpstreams(%q): %v", tc.in, err)
		case tc.err == "" && ups.String() != tc.want:
			t.Errorf("parseUpstreams(%q) = %s, want %s", tc.in, ups, tc.want)
		}
	}
	if _, err := New(&Options{Upstream: "127.0.0.1:9102"}); err == nil || strings.Count(err.Error(), "proxy:") != 1 {
		t.Errorf("New error %v: want one proxy: prefix", err)
	}
}

// TestUpstreamOf: each wire format goes to its family's upstream; other
// requests by the route's client, then by their credential header.
func TestUpstreamOf(t *testing.T) {
	ups, err := parseUpstreams("anthropic=http://a,openai=http://o/v1,gemini=http://g,codeassist=http://ca")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{}
	route := func(name string) func(*http.Request) *http.Request {
		return func(r *http.Request) *http.Request {
			p.routes = map[string]*Client{"t": {Name: name}}
			r.URL.Path = "/_harness/t" + r.URL.Path
			return p.onRoute(r)
		}
	}
	header := func(k, v string) func(*http.Request) *http.Request {
		return func(r *http.Request) *http.Request { r.Header.Set(k, v); return r }
	}
	tests := []struct {
		method, path string
		with         func(*http.Request) *http.Request
		want         string
	}{
		{"POST", "/v1/messages", nil, "a"},
		{"POST", "/v1/responses", nil, "o"},
		{"POST", "/v1/chat/completions", nil, "o"},
		{"POST", "/v1beta/models/gemini-2.5-pro:streamGenerateContent", nil, "g"},
		{"HEAD", "/", nil, "a"},
		{"GET", "/v1/models", header("Authorization", "Bearer k"), "o"},
		{"GET", "/v1/models", header("X-Api-Key", "k"), "a"},
		{"GET", "/v1beta/models", nil, "g"},
		{"GET", "/models", route("codex"), "o"},
		{"POST", "/v1internal:streamGenerateContent", nil, "ca"},
		{"POST", "/v1internal:loadCodeAssist", route("gemini"), "ca"},
		{"HEAD", "/", route("gemini"), "g"},
	}
	for _, tc := range tests {
		r := httptest.NewRequest(tc.method, tc.path, nil)
		if tc.with != nil {
			r = tc.with(r)
		}
		if got, _ := ups.of(r); got.Host != tc.want {
			t.Errorf("%s %s: upstream %s, want %s", tc.method, tc.path, got.Host, tc.want)
		}
	}
}

// TestUpstreamChatGPT: Codex signed in with ChatGPT (its calls carry
// ChatGPT-Account-Id, its token is no API key) goes to ChatGPT's backend,
// its path without the /v1 of the OpenAI base URL it was given; where only
// openai is named (a gateway the client was pointed at), to that gateway
// as the client would have sent it; an API call with the same path stays
// the API's.
func TestUpstreamChatGPT(t *testing.T) {
	req := func(path string, chatgpt bool) *http.Request {
		r := httptest.NewRequest("POST", path, nil)
		r.Header.Set("Authorization", "Bearer t")
		if chatgpt {
			r.Header.Set("ChatGPT-Account-Id", "acc-1")
		}
		return r
	}
	for _, tc := range []struct {
		upstream, path string
		chatgpt        bool
		want           string
	}{
		{"", "/v1/responses", true, "https://chatgpt.com/backend-api/codex/responses"},
		{"", "/v1/models", true, "https://chatgpt.com/backend-api/codex/models"},
		{"", "/v1/responses", false, "https://api.openai.com/v1/responses"},
		{"openai=http://gw/openai/v1", "/v1/responses", true, "http://gw/openai/v1/responses"},
		{"openai=http://gw/v1,chatgpt=http://cg/backend-api/codex", "/v1/responses", true, "http://cg/backend-api/codex/responses"},
		{"http://all", "/v1/responses", true, "http://all/v1/responses"},
	} {
		ups, err := parseUpstreams(tc.upstream)
		if err != nil {
			t.Fatal(err)
		}
		p := &Proxy{upstreams: ups}
		if got := p.target(req(tc.path, tc.chatgpt)); got != tc.want {
			t.Errorf("%q, %s (ChatGPT %v): %s, want %s", tc.upstream, tc.path, tc.chatgpt, got, tc.want)
		}
	}
}

// FuzzParseUpstreams: any --upstream value parses or is refused without
// a panic, and what parses describes itself in a form that parses back to
// the same routing.
func FuzzParseUpstreams(f *testing.F) {
	for _, s := range []string{"", "http://127.0.0.1:9102", "127.0.0.1:9102", "anthropic=http://a,openai=https://o/v1",
		"gemini=http://g,gemini=http://h", "chatgpt=http://c/backend-api/codex", "openai=http://o/v1,chatgpt=http://o/v1", "x=y", "http://h/p?a=b,c", "openai=", ",", "anthropic=http://a,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ups, err := parseUpstreams(s)
		if err != nil {
			return
		}
		again, err := parseUpstreams(ups.String())
		if err != nil || again.String() != ups.String() {
			t.Errorf("%q: described as %q, which parses to %q (%v)", s, ups.String(), again.String(), err)
		}
	})
}
