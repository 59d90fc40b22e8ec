package proxy

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/agentharness/harness/provider/catalog"
)

// UpstreamError reports an Options.Upstream that New cannot use; Reason
// says what is wrong with it and how to write it.
type UpstreamError struct {
	Reason string
}

// Error names the upstream failure's reason.
func (e *UpstreamError) Error() string { return "proxy: upstream " + e.Reason }

// api is a provider's family of wire formats: the requests that go to
// one upstream.
type api string

const (
	apiAnthropic api = "anthropic" // Messages
	apiOpenAI    api = "openai"    // Responses and Chat Completions
	apiGemini    api = "gemini"    // generateContent
	// apiChatGPT is the Responses calls of Codex signed in with ChatGPT
	// (they carry ChatGPT-Account-Id), which ChatGPT's backend serves,
	// not the API: its token is no API key.
	apiChatGPT api = "chatgpt"
	// apiCodeAssist is Google's Code Assist API, which Gemini CLI signed
	// in with Google calls (/v1internal:…).
	apiCodeAssist api = "codeassist"
)

// codeAssistEndpoint is Code Assist's public endpoint.
const codeAssistEndpoint = "https://cloudcode-pa.googleapis.com"

// chatGPTEndpoint is the ChatGPT backend's route for Codex, where Codex
// signed in with ChatGPT sends its model calls; its paths have no /v1.
const chatGPTEndpoint = "https://chatgpt.com/backend-api/codex"

// apis lists the families in the order they are described.
var apis = []api{apiAnthropic, apiOpenAI, apiGemini, apiChatGPT, apiCodeAssist}

// publicEndpoint is the provider's own base URL of a family.
func publicEndpoint(a api) string {
	switch a {
	case apiAnthropic:
		return catalog.AnthropicEndpoint
	case apiGemini:
		return catalog.GeminiEndpoint
	case apiChatGPT:
		return chatGPTEndpoint
	case apiCodeAssist:
		return codeAssistEndpoint
	}
	return catalog.OpenAIEndpoint
}

// upstreams says where each request goes: one URL for every request (a
// bare URL, as Options.Upstream takes it), or one per family. ChatGPT's
// calls go where OpenAI's do when only openai is named (the gateway the
// client was pointed at gets all of them, as the client would have sent
// them: viaOpenAI), else to the ChatGPT backend, with the /v1 a client's
// OpenAI base URL puts in front of the path left out.
type upstreams struct {
	all       *url.URL
	by        map[api]*url.URL
	viaOpenAI bool
}

// parseUpstreams reads Options.Upstream: "" (every family to its
// provider's public endpoint), a bare URL (every request there), or
// "anthropic=URL,openai=URL,gemini=URL" with any of the three left out
// (those go to the public endpoint).
func parseUpstreams(s string) (upstreams, error) {
	s = strings.TrimSpace(s)
	if s != "" && !strings.Contains(strings.SplitN(s, "://", 2)[0], "=") {
		u, err := upstreamURL(s)
		return upstreams{all: u}, err
	}
	ups := upstreams{by: map[api]*url.URL{}}
	if s != "" {
		for _, item := range strings.Split(s, ",") {
			name, raw, _ := strings.Cut(strings.TrimSpace(item), "=")
			a := api(strings.ToLower(strings.TrimSpace(name)))
			if !slices.Contains(apis, a) {
				return upstreams{}, fmt.Errorf("%q: %q is not anthropic, openai, gemini, chatgpt or codeassist (want anthropic=URL,openai=URL,gemini=URL,chatgpt=URL,codeassist=URL, or one URL for every request)", s, name)
			}
			if _, dup := ups.by[a]; dup {
				return upstreams{}, fmt.Errorf("%q: %s is named twice", s, a)
			}
			u, err := upstreamURL(strings.TrimSpace(raw))
			if err != nil {
				return upstreams{}, err
			}
			ups.by[a] = u
		}
	}
	if ups.by[apiChatGPT] == nil && ups.by[apiOpenAI] != nil {
		ups.by[apiChatGPT], ups.viaOpenAI = ups.by[apiOpenAI], true
	}
	for _, a := range apis {
		if ups.by[a] == nil {
			u, err := url.Parse(publicEndpoint(a))
			if err != nil {
				return upstreams{}, err
			}
			ups.by[a] = u
		}
	}
	return ups, nil
}

// upstreamURL checks one upstream base URL: http or https with a host. A
// URL written without its scheme gets told which to add.
func upstreamURL(s string) (*url.URL, error) {
	if s != "" && !strings.Contains(s, "://") {
		return nil, fmt.Errorf("%q has no scheme: write http://%s (or https://%s)", s, s, s)
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q: want an http or https URL with a host", s)
	}
	return u, nil
}

// of returns the upstream of r (its wire format's family, else the one
// of the client its route names, else the one its headers speak for) and
// the path to send it to there.
func (ups upstreams) of(r *http.Request) (*url.URL, string) {
	if ups.all != nil {
		return ups.all, r.URL.Path
	}
	a := apiOf(r)
	path := r.URL.Path
	if a == apiChatGPT && !ups.viaOpenAI {
		if rest, ok := strings.CutPrefix(path, "/v1/"); ok {
			path = "/" + rest
		}
	}
	return ups.by[a], path
}

// apiOf tells the family of a request: by its wire format, by the client
// behind its route, by the credential header it carries (Anthropic's
// x-api-key or anthropic-version, Gemini's x-goog-api-key or v1beta
// paths); anything else is OpenAI's.
func apiOf(r *http.Request) api {
	if a := familyOf(r); a != apiOpenAI || r.Header.Get("Chatgpt-Account-Id") == "" {
		return a
	}
	return apiChatGPT
}

// familyOf is apiOf without ChatGPT's calls told from the API's.
func familyOf(r *http.Request) api {
	switch formatOf(r).(type) {
	case anthropicFormat:
		return apiAnthropic
	case responsesFormat, chatFormat:
		return apiOpenAI
	case geminiFormat:
		return apiGemini
	case codeAssistFormat:
		return apiCodeAssist
	}
	if isCodeAssist(r.URL.Path) {
		return apiCodeAssist
	}
	if c := clientOf(r.Context()); c != nil {
		switch c.Name {
		case "claude":
			return apiAnthropic
		case "codex":
			return apiOpenAI
		case "gemini":
			return apiGemini
		}
	}
	h := r.Header
	switch p := r.URL.Path; {
	case h.Get("Anthropic-Version") != "" || h.Get("X-Api-Key") != "":
		return apiAnthropic
	case h.Get("X-Goog-Api-Key") != "" || strings.Contains(p, "/v1beta/") || strings.Contains(p, "/v1alpha/") || strings.Contains(p, "/models/") && strings.Contains(p, ":"):
		return apiGemini
	case strings.HasPrefix(h.Get("Authorization"), "Bearer "):
		return apiOpenAI
	}
	// Claude Code's reachability check (HEAD /) carries no header.
	return apiAnthropic
}

// String describes the routing for the proxy's start-up line.
func (ups upstreams) String() string {
	if ups.all != nil {
		return ups.all.String()
	}
	parts := make([]string, 0, len(apis))
	for _, a := range apis {
		if a == apiChatGPT && ups.viaOpenAI {
			continue // implied by openai's
		}
		parts = append(parts, string(a)+"="+ups.by[a].String())
	}
	return strings.Join(parts, ",")
}

// Upstreams describes where the proxy forwards requests: one URL, or
// "anthropic=URL,openai=URL,gemini=URL".
func (p *Proxy) Upstreams() string { return p.upstreams.String() }
