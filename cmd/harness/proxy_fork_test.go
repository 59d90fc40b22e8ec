package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
)

// TestProxyForkGeminiSessions runs two Gemini CLI sessions in one
// workspace on one day, opening with the same prompt, through the proxy;
// the scripted model takes another tool call in each. Gemini CLI names
// its session by nothing but its session context (date included) and the
// prompt, so both share a conversation key; the second session's history
// diverges from the first's at its first round and is stored as a fork:
// two conversations offered tools, each with its own call and result.
func TestProxyForkGeminiSessions(t *testing.T) {
	bin := clientBin(t, "gemini")
	calls := []wiretest.Call{
		{ID: "call_manifest", Name: "run_shell_command", Args: `{"command":"cat package.json"}`},
		{ID: "call_listing", Name: "run_shell_command", Args: `{"command":"ls"}`},
	}
	var mu sync.Mutex
	session := 0 // the session the scripted model is answering
	r := startE2E(t, func(req wiretest.Request) wiretest.Reply {
		if req.Method != http.MethodPost || !strings.Contains(req.Path, "/models/") {
			return notModelCall(req)
		}
		u := wiretest.Usage{Input: len(req.Body) / 4, Output: 20}
		if strings.HasSuffix(req.Path, ":generateContent") {
			return geminiRouterReply(u)
		}
		mu.Lock()
		c := calls[session]
		mu.Unlock()
		if !strings.Contains(string(req.Body), `"functionResponse"`) {
			return wiretest.GeminiStream(geminiPathModel(req.Path), "", []wiretest.Call{c}, u)
		}
		return wiretest.GeminiStream(geminiPathModel(req.Path), e2eAnswer, nil, u)
	})
	env := []string{"HOME=" + newGeminiHome(t, ""), "GEMINI_API_KEY=sk-test-gemini-e2e", "GOOGLE_GEMINI_BASE_URL=" + r.addr, "GEMINI_CLI_TRUST_WORKSPACE=true"}
	args := []string{"-p", resumeFirst, "--yolo", "--skip-trust", "-o", "json"}
	runClient(t, r.work, env, bin, args...)
	mu.Lock()
	session = 1
	mu.Unlock()
	runClient(t, r.work, env, bin, args...)
	log := r.stderr.String()
	var got []string
	for _, s := range r.storedConvs(t) {
		conv, offered := s.conv, s.offered
		var ids []string
		for _, turn := range conv.Turns {
			for _, rd := range turn.Rounds {
				for _, c := range rd.Assistant.ToolCalls {
					ids = append(ids, c.ID)
				}
			}
		}
		t.Logf("conversation %s: %d turn(s), calls %v, offered tools %v, %q", s.ID, len(conv.Turns), ids, offered, s.Title)
		if len(ids) > 0 {
			if len(conv.Turns) != 1 || conv.Turns[0].Input != resumeFirst || conv.Turns[0].Answer() != e2eAnswer {
				t.Errorf("conversation %s: turns %+v; want the prompt, one call, the answer", s.ID, conv.Turns)
			}
			got = append(got, strings.Join(ids, ","))
		}
	}
	slices.Sort(got)
	if want := []string{"call_listing", "call_manifest"}; !slices.Equal(got, want) {
		t.Errorf("conversations with calls %q, want one per session: %q", got, want)
	}
	if !strings.Contains(log, " forks from ") {
		t.Errorf("no fork notice in the proxy's log:\n%s", tail(log, 4000))
	}
}

// rewound is the second prompt as a Claude Code user edits it after
// rewinding to the end of the first turn.
const rewoundSecond = "Second question, asked another way: does the lock file pin that version?"

// TestProxyForkClaudeRewind runs a Claude Code session of two turns
// through the proxy, then rewinds it to the end of its first turn and asks
// the second question in other words: claude -p --resume ID
// --resume-session-at UUID (a flag 2.1.197 takes but does not list in
// --help; it keeps the session's messages up to UUID). The rewound
// history shares the session's key (its session id and first prompt) and
// diverges at turn 2's input: stored as a fork holding turn 1 and the new
// turn 2, the session as it was.
func TestProxyForkClaudeRewind(t *testing.T) {
	bin := clientBin(t, "claude")
	c := claudeResume()
	r := startE2E(t, func(req wiretest.Request) wiretest.Reply { return c.serve(t, req, true) })
	env := c.setup(t, r.addr)
	var home string
	for _, e := range env {
		if h, ok := strings.CutPrefix(e, "HOME="); ok {
			home = h
		}
	}
	out := runClient(t, r.work, env, bin, c.run(resumeFirst, false)...)
	var first struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(out), &first); err != nil || first.SessionID == "" {
		t.Fatalf("no session id in claude's output (%v):\n%s", err, out)
	}
	runClient(t, r.work, env, bin, append(c.run(resumeSecond, false), "--resume", first.SessionID)...)
	at := lastAssistantBefore(t, home, first.SessionID, resumeSecond)
	runClient(t, r.work, env, bin, append(c.run(rewoundSecond, false), "--resume", first.SessionID, "--resume-session-at", at)...)
	log := r.stderr.String()
	var got []string
	for _, s := range r.storedConvs(t) {
		conv := s.conv
		var inputs []string
		for _, turn := range conv.Turns {
			inputs = append(inputs, turn.Input)
		}
		t.Logf("conversation %s: turns %q", s.ID, inputs)
		if len(conv.Turns) > 0 && (len(conv.Turns[0].Rounds) == 0 || len(conv.Turns[0].Rounds[0].Results) != 1) {
			t.Errorf("conversation %s: the first turn's call and result were not stored", s.ID)
		}
		got = append(got, strings.Join(inputs, " | "))
	}
	slices.Sort(got)
	want := []string{resumeFirst + " | " + resumeSecond, resumeFirst + " | " + rewoundSecond}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("stored conversations %q, want %q", got, want)
	}
	if !strings.Contains(log, " forks from ") || !strings.Contains(log, "at turn 2 input (1 shared turn(s))") {
		t.Errorf("no fork notice at turn 2 in the proxy's log:\n%s", tail(log, 4000))
	}
}

// lastAssistantBefore reads Claude Code's own history of session id under
// home (~/.claude/projects/<the workspace, escaped>/<id>.jsonl) and
// returns the uuid of the last assistant entry before the user entry
// whose text holds prompt.
func lastAssistantBefore(t *testing.T, home, id, prompt string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", id+".jsonl"))
	if err != nil || len(files) != 1 {
		t.Fatalf("claude's history of session %s: %v (err %v)", id, files, err)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	last := ""
	for line := range strings.Lines(string(data)) {
		var e struct {
			Type    string          `json:"type"`
			UUID    string          `json:"uuid"`
			Message json.RawMessage `json:"message"`
		}
		if json.Unmarshal([]byte(line), &e) != nil {
			continue
		}
		switch {
		case e.Type == "user" && strings.Contains(string(e.Message), prompt):
			if last == "" {
				t.Fatalf("no assistant entry before %q in %s", prompt, files[0])
			}
			return last
		case e.Type == "assistant":
			last = e.UUID
		}
	}
	t.Fatalf("no user entry holds %q in %s", prompt, files[0])
	return ""
}
