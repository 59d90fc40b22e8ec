package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness/internal/wiretest"
)

// resumeClient is how one real client runs a session and resumes it in a
// second process, through the proxy.
type resumeClient struct {
	name     string // the client's binary
	provider string // the API it is pointed at, when it speaks several
	// serve answers one model call: call makes the scripted tool call,
	// answer the final answer; model calls that offer no tools (Gemini
	// CLI's router) get side.
	serve func(t *testing.T, req wiretest.Request, first bool) wiretest.Reply
	// setup writes the client's configuration for the proxy at addr and
	// returns its environment.
	setup func(t *testing.T, addr string) []string
	// run returns the arguments of the session's first process
	// (resume false) or of the one that resumes it.
	run func(prompt string, resume bool) []string
	// dated: the client dates the first message of every request (a
	// resumed session's too).
	dated bool
	// sameDay: resume the same day. Gemini CLI names its session by
	// nothing but its session context, date included (proxy's
	// sessionLines), so a session it resumes on another day is a new
	// conversation.
	sameDay bool
}

const (
	resumeFirst  = "First question: which version of zod does package.json ask for?"
	resumeSecond = "Second question: is that the version the lock file pins?"
)

// TestProxyResume runs each real client through the proxy twice: a
// session whose first turn calls a tool, then, a week later (faketime;
// Gemini CLI the same day, see resumeClient.sameDay), a second process
// that resumes it (claude --continue, codex exec resume --last, gemini
// --resume latest, opencode run --continue) with a second prompt. The
// store must hold the session as one conversation of two turns. Before
// the proxy keyed these conversations on what names the client's
// session, the resumed process made a second conversation that copied
// the first turn: Claude Code 2.1.197 dates its first message anew and
// states its model's context window in one process's system prompt and
// not the next's, Gemini CLI 0.61.0 lists its skills in another order in
// some processes, opencode 1.18.33 dates its system prompt (it names its
// session in a header; over the Responses API it sends prompt_cache_key
// too).
func TestProxyResume(t *testing.T) {
	for _, c := range []resumeClient{claudeResume(), codexResume(), geminiResume(), opencodeResume("anthropic"), opencodeResume("openai")} {
		t.Run(c.label(), func(t *testing.T) {
			bin := clientBin(t, c.name)
			r := startE2E(t, func(req wiretest.Request) wiretest.Reply {
				return c.serve(t, req, !strings.Contains(string(req.Body), "Second question"))
			})
			env := c.setup(t, r.addr)
			runClient(t, r.work, env, bin, c.run(resumeFirst, false)...)
			// A week later, as a user resumes a session: the clients date
			// the first message anew.
			later, args := bin, c.run(resumeSecond, true)
			if !c.sameDay {
				later, args = laterCommand(t, bin, args)
			}
			runClient(t, r.work, env, later, args...)
			if when := time.Now().AddDate(0, 0, 7); later != bin && c.dated && !slices.ContainsFunc(r.up.Requests(), func(q wiretest.Request) bool {
				return bytes.Contains(q.Body, []byte(when.Format("2006-01-02"))) || bytes.Contains(q.Body, []byte(when.Format("January 2, 2006")))
			}) {
				t.Errorf("no request of the resumed process is dated %s: faketime did not take", when.Format("2006-01-02"))
			}
			if d := os.Getenv("E2E_DUMP"); d != "" {
				for i, q := range r.up.Requests() {
					_ = os.WriteFile(filepath.Join(d, fmt.Sprintf("%s%d.json", c.name, i)), q.Body, 0o644)
					h, _ := json.Marshal(q.Header)
					_ = os.WriteFile(filepath.Join(d, fmt.Sprintf("%s%d.hdr", c.name, i)), h, 0o644)
				}
			}
			checkResumed(t, r)
		})
	}
}

// label names the subtest: the client, and its provider if it has several.
func (c resumeClient) label() string {
	if c.provider == "" {
		return c.name
	}
	return c.name + "/" + c.provider
}

// opencodeResume runs opencode against provider (anthropic or openai):
// opencode run, then opencode run --continue.
func opencodeResume(provider string) resumeClient {
	path, mark, reply := "/v1/messages", `"type":"tool_result"`, wiretest.AnthropicStream
	if provider == "openai" {
		path, mark, reply = "/v1/responses", `"type":"function_call_output"`, wiretest.ResponsesStream
	}
	return resumeClient{
		name: "opencode", provider: provider,
		serve: func(t *testing.T, req wiretest.Request, first bool) wiretest.Reply {
			if req.Method != http.MethodPost || !strings.HasSuffix(req.Path, path) {
				return notModelCall(req)
			}
			m := bodyJSON(t, req.Body)
			model, _ := m["model"].(string)
			u := wiretest.Usage{Input: len(req.Body) / 4, Output: 20}
			if tools, _ := m["tools"].([]any); len(tools) == 0 {
				return reply(model, "Zod version", nil, u) // the title request
			}
			if first && !strings.Contains(string(req.Body), mark) {
				return reply(model, "", []wiretest.Call{{ID: "call_pkg", Name: "bash", Args: `{"command":"cat package.json","description":"Read the manifest"}`}}, u)
			}
			return reply(model, e2eAnswer, nil, u)
		},
		setup: func(t *testing.T, addr string) []string {
			return opencodeEnv(t.TempDir(), provider, addr, "sk-test-opencode-"+provider, "")
		},
		run: func(prompt string, resume bool) []string {
			if resume {
				return []string{"run", "--continue", prompt}
			}
			return []string{"run", prompt}
		},
	}
}

// laterCommand returns bin and args run under faketime a week from now
// (CI installs it; elsewhere, without it, the session is resumed the same
// day and the test says so).
func laterCommand(t *testing.T, bin string, args []string) (string, []string) {
	t.Helper()
	ft, err := exec.LookPath("faketime")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("faketime is not on PATH (%v): .ci/run installs Debian's faketime", err)
		}
		t.Logf("faketime is not on PATH (%v): resuming the same day", err)
		return bin, args
	}
	return ft, append([]string{"-f", "+7d", bin}, args...)
}

// checkResumed checks the proxy's store: exactly one conversation was
// offered tools (others are a client's side requests: Gemini CLI's router
// sends the history with no tools, to another model), and its turns are
// the two prompts, the first with its call.
func checkResumed(t *testing.T, r *e2eRig) {
	t.Helper()
	var sessions []string
	for _, s := range r.storedConvs(t) {
		if _, _, fork := strings.Cut(strings.TrimPrefix(s.ID, "px-"), "-f"); fork {
			// A fork's id is its parent's with -f and a hash: a resumed
			// session, or its side requests (Gemini CLI's router), must
			// not diverge from what the store holds.
			t.Errorf("conversation %s is a fork", s.ID)
		}
		if !s.offered {
			t.Logf("side conversation %s: %d turn(s), %q", s.ID, s.Turns, s.Title)
			continue
		}
		sessions = append(sessions, s.ID)
		conv := s.conv
		var inputs []string
		for _, turn := range conv.Turns {
			inputs = append(inputs, turn.Input)
		}
		// opencode run sends a prompt of several words in quotes.
		for i := range inputs {
			inputs[i] = strings.Trim(inputs[i], `"`)
		}
		if len(inputs) != 2 || inputs[0] != resumeFirst || inputs[1] != resumeSecond {
			t.Errorf("conversation %s has the turns %q; want the two prompts", s.ID, inputs)
		} else if len(conv.Turns[0].Rounds) == 0 || len(conv.Turns[0].Rounds[0].Results) != 1 {
			t.Errorf("conversation %s: the first turn's call and result were not stored: %+v", s.ID, conv.Turns[0])
		}
	}
	if len(sessions) != 1 {
		t.Errorf("the store holds %d conversations offered tools (%q); the session and its resumption are one", len(sessions), sessions)
	}
}

func claudeResume() resumeClient {
	return resumeClient{
		name: "claude",
		serve: func(t *testing.T, req wiretest.Request, first bool) wiretest.Reply {
			if req.Method != http.MethodPost || !strings.HasSuffix(req.Path, "/v1/messages") {
				return notModelCall(req)
			}
			m := bodyJSON(t, req.Body)
			model, _ := m["model"].(string)
			u := wiretest.Usage{Input: len(req.Body) / 4, Output: 20}
			if first && !strings.Contains(string(req.Body), `"type":"tool_result"`) {
				return wiretest.AnthropicStream(model, "", []wiretest.Call{{ID: "call_pkg", Name: "Bash", Args: `{"command":"cat package.json","description":"Read the manifest"}`}}, u)
			}
			return wiretest.AnthropicStream(model, e2eAnswer, nil, u)
		},
		setup: func(t *testing.T, addr string) []string {
			return []string{"HOME=" + t.TempDir(), "ANTHROPIC_BASE_URL=" + addr, "ANTHROPIC_API_KEY=sk-test-claude-e2e",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1"}
		},
		run: func(prompt string, resume bool) []string {
			args := []string{"-p", prompt, "--output-format", "json", "--allowedTools", "Bash(cat:*)"}
			if resume {
				args = append(args, "--continue")
			}
			return args
		},
		dated: true,
	}
}

func codexResume() resumeClient {
	return resumeClient{
		name: "codex",
		serve: func(t *testing.T, req wiretest.Request, first bool) wiretest.Reply {
			if req.Method != http.MethodPost || !strings.HasSuffix(req.Path, "/v1/responses") {
				return notModelCall(req)
			}
			m := bodyJSON(t, req.Body)
			model, _ := m["model"].(string)
			u := wiretest.Usage{Input: len(req.Body) / 4, Output: 20}
			if first && !strings.Contains(string(req.Body), `"type":"function_call_output"`) {
				return wiretest.ResponsesStream(model, "", []wiretest.Call{{ID: "call_pkg", Name: "exec_command", Args: `{"cmd":"cat package.json"}`}}, u)
			}
			return wiretest.ResponsesStream(model, e2eAnswer, nil, u)
		},
		setup: func(t *testing.T, addr string) []string {
			home := newCodexHome(t, addr, "", "")
			return []string{"HOME=" + t.TempDir(), "CODEX_HOME=" + home, "FAKE_API_KEY=sk-test-codex-e2e"}
		},
		run: func(prompt string, resume bool) []string {
			args := []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json"}
			if resume {
				args = append(args, "resume", "--last")
			}
			return append(args, prompt)
		},
	}
}

func geminiResume() resumeClient {
	return resumeClient{
		name: "gemini",
		serve: func(t *testing.T, req wiretest.Request, first bool) wiretest.Reply {
			if req.Method != http.MethodPost || !strings.Contains(req.Path, "/models/") {
				return notModelCall(req)
			}
			model := geminiPathModel(req.Path)
			u := wiretest.Usage{Input: len(req.Body) / 4, Output: 20}
			if strings.HasSuffix(req.Path, ":generateContent") {
				return geminiRouterReply(u)
			}
			if first && !strings.Contains(string(req.Body), `"functionResponse"`) {
				return wiretest.GeminiStream(model, "", []wiretest.Call{{ID: "call_pkg", Name: "run_shell_command", Args: `{"command":"cat package.json"}`}}, u)
			}
			return wiretest.GeminiStream(model, e2eAnswer, nil, u)
		},
		setup: func(t *testing.T, addr string) []string {
			home := newGeminiHome(t, "")
			return []string{"HOME=" + home, "GEMINI_API_KEY=sk-test-gemini-e2e", "GOOGLE_GEMINI_BASE_URL=" + addr, "GEMINI_CLI_TRUST_WORKSPACE=true"}
		},
		run: func(prompt string, resume bool) []string {
			args := []string{"-p", prompt, "--yolo", "--skip-trust", "-o", "json"}
			if resume {
				args = append(args, "--resume", "latest")
			}
			return args
		},
		dated:   true,
		sameDay: true,
	}
}
