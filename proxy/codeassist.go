package proxy

import (
	"encoding/json"
	"strings"
)

// codeAssistFormat is Google's Code Assist API (POST
// …/v1internal:generateContent and :streamGenerateContent?alt=sse), which
// Gemini CLI signed in with Google (or with a machine's default
// credentials) calls instead of the Gemini API: a Gemini request under
// "request", beside the model, the Cloud project and the prompt's id, and
// each answer a Gemini response under "response". Everything else is the
// Gemini format's.
type codeAssistFormat struct{ geminiFormat }

func (codeAssistFormat) name() string { return "gemini-code-assist" }

func (codeAssistFormat) envelope() string { return "request" }

func (f codeAssistFormat) top(body []byte, top []field, req *request) error {
	if err := f.geminiFormat.top(body, top, req); err != nil {
		return err
	}
	req.Model = fieldStr(body, top, "model")
	return nil
}

func (codeAssistFormat) newReply() replyParser { return &codeAssistReply{} }

// codeAssistReply reads a Code Assist answer: the Gemini response under
// "response" of each event, or of the whole body.
type codeAssistReply struct{ geminiReply }

func (p *codeAssistReply) event(name string, data []byte) {
	var env struct {
		Response json.RawMessage `json:"response"`
	}
	if json.Unmarshal(data, &env) == nil && len(env.Response) > 0 {
		p.geminiReply.event(name, env.Response)
	}
}

func (p *codeAssistReply) body(data []byte) { p.event("", data) }

// isCodeAssist reports whether path is a Code Assist method's
// (/v1internal:method, after any route prefix).
func isCodeAssist(path string) bool {
	return strings.Contains(path, "/v1internal:") || strings.HasSuffix(path, "/v1internal")
}
