package proxy

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestConversationKey checks which requests share a conversation id:
// what names the client's session (Claude Code's session id, Gemini CLI's
// session context) keys the conversation in place of the system prompt,
// which those clients change between the processes of one session.
func TestConversationKey(t *testing.T) {
	ccOn := func(date, system, userID, model, prompt string) string {
		meta := ""
		if userID != "" {
			meta = `"metadata":{"user_id":` + jsonString(userID) + `},`
		}
		return `{"model":"` + model + `",` + meta + `"system":[{"type":"text","text":` + jsonString(system) + `}],` +
			`"messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>\nToday's date is ` + date + `.\n</system-reminder>"},{"type":"text","text":` + jsonString(prompt) + `}]}]}`
	}
	cc := func(system, userID, model, prompt string) string {
		return ccOn("2026-12-02", system, userID, model, prompt)
	}
	session := func(id string) string { return `{"device_id":"d1","account_uuid":"","session_id":"` + id + `"}` }
	gemIn := func(system, date, workspace, files, prompt string) string {
		ctx := ""
		if date != "" {
			ctx = `{"text":` + jsonString("<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\nToday's date is "+date+
				" (formatted according to the user's locale).\nMy operating system is: linux\n- **Workspace Directories:**\n  - "+workspace+
				"\n- **Directory Structure:**\n\n"+workspace+"/\n"+files+"\n</session_context>") + `},`
		}
		return `{"systemInstruction":{"parts":[{"text":` + jsonString(system) + `}]},"contents":[{"role":"user","parts":[` + ctx + `{"text":` + jsonString(prompt) + `}]}]}`
	}
	gem := func(system string, withContext bool, prompt string) string {
		if !withContext {
			return gemIn(system, "", "", "", prompt)
		}
		return gemIn(system, "Wednesday, December 2, 2026", "/home/u/app", "└───package.json", prompt)
	}
	for _, tc := range []struct {
		name   string
		f      wireFormat
		path   string
		a, b   string
		sameID bool
		// hdrA, hdrB: the X-Session-Id header of each request ("" none).
		hdrA, hdrB string
	}{
		{"claude code: the session id, not the system prompt", anthropicFormat{}, "/v1/messages",
			cc("You are powered by Opus 4.8 (1M context).", session("s-1"), "claude-opus-4-8", "fix it"),
			cc("You are powered by Opus 4.8.", session("s-1"), "claude-opus-4-8", "fix it"), true, "", ""},
		{"claude code: resumed on another day (its reminder dated anew)", anthropicFormat{}, "/v1/messages",
			ccOn("2026-12-02", "S", session("s-1"), "claude-opus-4-8", "fix it"),
			ccOn("2026-12-09", "S", session("s-1"), "claude-opus-4-8", "fix it"), true, "", ""},
		{"anthropic without a session: the whole first message keys", anthropicFormat{}, "/v1/messages",
			ccOn("2026-12-02", "S", "", "m", "fix it"), ccOn("2026-12-09", "S", "", "m", "fix it"), false, "", ""},
		{"claude code: another session", anthropicFormat{}, "/v1/messages",
			cc("S", session("s-1"), "claude-opus-4-8", "fix it"), cc("S", session("s-2"), "claude-opus-4-8", "fix it"), false, "", ""},
		{"claude code: a side request of the session (another first message)", anthropicFormat{}, "/v1/messages",
			cc("S", session("s-1"), "claude-opus-4-8", "fix it"), cc("S", session("s-1"), "claude-opus-4-8", "Write a title for: fix it"), false, "", ""},
		{"claude code: another model", anthropicFormat{}, "/v1/messages",
			cc("S", session("s-1"), "claude-opus-4-8", "fix it"), cc("S", session("s-1"), "claude-haiku-4-5", "fix it"), false, "", ""},
		{"claude code 1.x user_id names the same session", anthropicFormat{}, "/v1/messages",
			cc("S1", session("s-1"), "m", "fix it"), cc("S2", "user_ab12_account__session_s-1", "m", "fix it"), true, "", ""},
		{"anthropic without a session: the system prompt keys", anthropicFormat{}, "/v1/messages",
			cc("S1", "", "m", "fix it"), cc("S2", "", "m", "fix it"), false, "", ""},
		{"anthropic without a session, same system prompt", anthropicFormat{}, "/v1/messages",
			cc("S1", "", "m", "fix it"), cc("S1", "", "m", "fix it"), true, "", ""},
		{"an opaque user_id is no session", anthropicFormat{}, "/v1/messages",
			cc("S1", "user-42", "m", "fix it"), cc("S2", "user-42", "m", "fix it"), false, "", ""},
		{"opencode: its X-Session-Id header, not the dated system prompt", anthropicFormat{}, "/v1/messages",
			cc("Today's date: Wed Dec 02 2026", "", "m", "fix it"), cc("Today's date: Wed Dec 09 2026", "", "m", "fix it"), true, "ses_1", "ses_1"},
		{"opencode: another session", anthropicFormat{}, "/v1/messages",
			cc("S", "", "m", "fix it"), cc("S", "", "m", "fix it"), false, "ses_1", "ses_2"},
		{"gemini cli: the session context, not the system prompt", geminiFormat{}, "/v1beta/models/gemini-3.1-pro:streamGenerateContent",
			gem("skills: a, b", true, "fix it"), gem("skills: b, a", true, "fix it"), true, "", ""},
		{"gemini cli: resumed the same day with a new file", geminiFormat{}, "/v1beta/models/gemini-3.1-pro:streamGenerateContent",
			gemIn("S", "Wednesday, December 2, 2026", "/home/u/app", "└───package.json", "fix it"),
			gemIn("S", "Wednesday, December 2, 2026", "/home/u/app", "├───main.go\n└───package.json", "fix it"), true, "", ""},
		{"gemini cli: another day (two sessions opening alike are told apart by it)", geminiFormat{}, "/v1beta/models/gemini-3.1-pro:streamGenerateContent",
			gemIn("S", "Wednesday, December 2, 2026", "/home/u/app", "└───package.json", "fix it"),
			gemIn("S", "Wednesday, December 9, 2026", "/home/u/app", "└───package.json", "fix it"), false, "", ""},
		{"gemini cli: another workspace", geminiFormat{}, "/v1beta/models/gemini-3.1-pro:streamGenerateContent",
			gemIn("S", "Wednesday, December 2, 2026", "/home/u/app", "└───package.json", "fix it"),
			gemIn("S", "Wednesday, December 2, 2026", "/home/u/other", "└───package.json", "fix it"), false, "", ""},
		{"gemini cli: another prompt", geminiFormat{}, "/v1beta/models/gemini-3.1-pro:streamGenerateContent",
			gem("S", true, "fix it"), gem("S", true, "test it"), false, "", ""},
		{"gemini without a session context: the system prompt keys", geminiFormat{}, "/v1beta/models/gemini-3.1-pro:streamGenerateContent",
			gem("skills: a, b", false, "fix it"), gem("skills: b, a", false, "fix it"), false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := func(body, session string) string {
				req, err := walkBody([]byte(body), tc.f, nil)
				if err != nil {
					t.Fatalf("parse: %v\n%s", err, body)
				}
				if req.Model == "" {
					req.Model = geminiModel(tc.path)
				}
				hr := httptest.NewRequest("POST", tc.path, nil)
				if session != "" {
					hr.Header.Set(sessionHeader, session)
				}
				return conversationID(hr, tc.f, req, buildHistory(req.Items))
			}
			a, b := id(tc.a, tc.hdrA), id(tc.b, tc.hdrB)
			if (a == b) != tc.sameID {
				t.Errorf("ids %s and %s: same %v, want %v", a, b, a == b, tc.sameID)
			}
		})
	}
}

func TestSessionLines(t *testing.T) {
	in := "<session_context>\nThis is the Gemini CLI.\nToday's date is Wednesday, December 2, 2026.\nMy operating system is: linux\n" +
		"- **Workspace Directories:**\n  - /w\n- **Directory Structure:**\n\n/w/\n└───a.go\n</session_context>"
	want := "<session_context>\nThis is the Gemini CLI.\nToday's date is Wednesday, December 2, 2026.\nMy operating system is: linux\n- **Workspace Directories:**\n  - /w\n"
	if got := sessionLines(in); got != want {
		t.Errorf("sessionLines:\n%q\nwant\n%q", got, want)
	}
	if got := sessionLines("no lines to drop"); got != "no lines to drop" {
		t.Errorf("sessionLines kept %q", got)
	}
}

func TestClaudeCodeSession(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"device_id":"d","account_uuid":"","session_id":"3b48bf68-d2d0"}`, "3b48bf68-d2d0"},
		{`{"device_id":"d"}`, ""},
		{`{not json`, ""},
		{"user_0a1b_account_4c5d_session_9e8f-77", "9e8f-77"},
		{"user-42", ""},
		{"", ""},
	} {
		if got := claudeCodeSession(tc.in); got != tc.want {
			t.Errorf("claudeCodeSession(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// FuzzClaudeCodeSession: a JSON user_id yields its session_id, the legacy
// form the text after "_session_", anything else nothing.
func FuzzClaudeCodeSession(f *testing.F) {
	for _, s := range []string{`{"device_id":"d","account_uuid":"","session_id":"3b48bf68"}`, "user_0a_account_4c_session_9e", "user-42", `{"session_id":7}`, ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, userID string) {
		got := claudeCodeSession(userID)
		var v struct {
			SessionID string `json:"session_id"`
		}
		if strings.HasPrefix(userID, "{") && json.Unmarshal([]byte(userID), &v) == nil && got != v.SessionID {
			t.Errorf("claudeCodeSession(%q) = %q, want its session_id %q", userID, got, v.SessionID)
		}
		if !strings.HasPrefix(userID, "{") {
			if _, want, _ := strings.Cut(userID, "_session_"); got != want {
				t.Errorf("claudeCodeSession(%q) = %q, want %q", userID, got, want)
			}
		}
	})
}
