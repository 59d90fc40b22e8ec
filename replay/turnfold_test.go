package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

// shape renders rec's turns as "[context before] input [context after]
// ×calls", one turn per line, for comparing a recording's turn structure.
func shape(rec *Recording) string {
	var b strings.Builder
	for _, t := range rec.Turns {
		var before, after []string
		for _, c := range t.Context {
			if c.AfterInput {
				after = append(after, c.Text)
			} else {
				before = append(before, c.Text)
			}
		}
		fmt.Fprintf(&b, "%v %s %v ×%d\n", before, t.Input, after, len(t.Calls))
	}
	return b.String()
}

// TestTurnFold folds scripted user-side messages and model calls into
// turns: context joins the prompt it precedes, or the prompt it follows
// before the first call; a prompt always starts a turn; context that a
// call (or the end) follows with no prompt is a turn whose input is its
// last message.
func TestTurnFold(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string // p:TEXT a prompt, c:TEXT context, call a model call
		want   string
	}{
		{"leading context", "c:agents c:env p:fix call call", "[agents env] fix [] ×2\n"},
		{"context after the prompt", "p:$skill c:skill call", "[] $skill [skill] ×1\n"},
		{"a new prompt after calls", "c:env p:one call p:two call", "[env] one [] ×1\n[] two [] ×1\n"},
		{"context before a later prompt", "p:one call c:aborted p:two call", "[] one [] ×1\n[aborted] two [] ×1\n"},
		{"a prompt no call answered", "p:one p:again call", "[] one [] ×0\n[] again [] ×1\n"},
		{"a prompt at the end", "p:one call p:bye", "[] one [] ×1\n[] bye [] ×0\n"},
		{"context between calls", "p:one call c:warning call", "[] one [] ×1\n[] warning [] ×1\n"},
		{"context with no prompt", "c:env c:summary call", "[env] summary [] ×1\n"},
		{"context at the end", "p:one call c:a c:b", "[] one [] ×1\n[a] b [] ×0\n"},
		{"a call before any input", "call c:env p:q call", "[]  [] ×1\n[env] q [] ×1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &Recording{}
			var f turnFold
			for _, step := range strings.Fields(tc.script) {
				kind, text, _ := strings.Cut(step, ":")
				switch kind {
				case "call":
					c := f.call(rec)
					c.Calls = append(c.Calls, &Call{})
				default:
					f.input(rec, text, kind == "c")
				}
			}
			f.end(rec)
			if got := shape(rec); got != tc.want {
				t.Errorf("turns:\n%swant:\n%s", got, tc.want)
			}
		})
	}
}

// codexPrompts returns the prompts a rollout's user_message events
// record: Codex writes one for every message the user typed and none for
// the messages it adds itself.
func codexPrompts(t *testing.T, data []byte) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l struct {
			Type    string `json:"type"`
			Payload struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"payload"`
		}
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Type == "event_msg" && l.Payload.Type == "user_message" {
			out = append(out, l.Payload.Message)
		}
	}
	return out
}

// TestCodexContextTurns imports the shipped rollouts: a turn is a prompt
// Codex's own user_message events name (the older rollout, which records
// no events, has one), and the messages Codex added before it (the
// developer's permissions and collaboration mode, AGENTS.md or the user
// instructions, the environment) are that turn's context, in the order
// recorded, so no turn is left without a model call.
func TestCodexContextTurns(t *testing.T) {
	for _, tc := range []struct {
		file    string
		context []string // the context messages' openings, in order
	}{
		{"rollout-2025-11-24T12-54-04-019ab737-4612-7f91-bf54-c6a3b3870ee6.jsonl", []string{"# AGENTS.md instructions for ", "<environment_context>"}},
		{"rollout-2026-02-04T21-29-45-019c2a58-c0cc-7860-b9ca-7e2dcda03ddb.jsonl", []string{"<permissions instructions>", "# AGENTS.md instructions for ", "<environment_context>", "<collaboration_mode>"}},
		{"rollout-2025-08-30T12-52-41-9aa0221f-be4a-424a-8633-55496d1e2dc3.jsonl", []string{"<user_instructions>", "<environment_context>"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", "codex", tc.file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := parseCodex(path, data)
			if err != nil {
				t.Fatal(err)
			}
			prompts := codexPrompts(t, data)
			if len(prompts) == 0 {
				prompts = []string{rec.Turns[len(rec.Turns)-1].Input} // no events: checked by its context below
			}
			if len(rec.Turns) != len(prompts) {
				t.Fatalf("%d turns, want one per prompt (%d):\n%s", len(rec.Turns), len(prompts), shape(rec))
			}
			for i, turn := range rec.Turns {
				if strings.TrimSpace(turn.Input) != strings.TrimSpace(prompts[i]) || len(turn.Calls) == 0 {
					t.Errorf("turn %d: input %.40q with %d calls, want the prompt %.40q answered", i+1, turn.Input, len(turn.Calls), prompts[i])
				}
			}
			ctx := rec.Turns[0].Context
			if len(ctx) != len(tc.context) {
				t.Fatalf("turn 1 has %d context messages, want %d:\n%s", len(ctx), len(tc.context), shape(rec))
			}
			for i, c := range ctx {
				if !strings.HasPrefix(c.Text, tc.context[i]) || c.AfterInput {
					t.Errorf("context %d: %.40q (after the input: %v), want %q before it", i, c.Text, c.AfterInput, tc.context[i])
				}
			}
		})
	}
}

// TestCodexContextPlaces imports rollouts that put Codex's messages
// elsewhere than before the first prompt.
func TestCodexContextPlaces(t *testing.T) {
	user := func(text string) string {
		b, _ := json.Marshal(text)
		return `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":` + string(b) + `}]}}` + "\n"
	}
	call := func(id string) string {
		return `{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"` + id + `"}}` + "\n"
	}
	output := func(id string) string {
		return `{"type":"response_item","payload":{"type":"function_call_output","call_id":"` + id + `","output":"ok"}}` + "\n"
	}
	answer := `{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}` + "\n"
	for _, tc := range []struct {
		name, rollout, want string
	}{
		// A skill's instructions follow the prompt that names the skill,
		// in the same request.
		{"skill", user("<environment_context>e</environment_context>") + user("$skill-installer") + user("<skill>\n<name>skill-installer</name>") + call("a") + output("a") + answer,
			"[<environment_context>e</environment_context>] $skill-installer [<skill>\n<name>skill-installer</name>] ×2\n"},
		// An interrupted prompt stays a turn (the user typed it); the
		// notice Codex adds after it leads nothing but sits in the same
		// place in the next request.
		{"interrupted", user("one") + answer + user("two") + user("<turn_aborted>\nThe user interrupted") + user("three") + call("b") + output("b") + answer,
			"[] one [] ×1\n[] two [<turn_aborted>\nThe user interrupted] ×0\n[] three [] ×2\n"},
		// A developer message and a changed environment before a later
		// prompt are that prompt's.
		{"later context", user("one") + answer + `{"type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>p"}]}}` + "\n" +
			user("<environment_context>\n  <approval_policy>never</approval_policy>") + user("two") + answer,
			"[] one [] ×1\n[<permissions instructions>p <environment_context>\n  <approval_policy>never</approval_policy>] two [] ×1\n"},
		// A message Codex adds between a call and its output is not the
		// user's, but sits between two model calls: it stays where it
		// was, a turn of its own.
		{"between calls", user("one") + call("c") + user("Warning: apply_patch was requested via shell_command.") + output("c") + answer,
			"[] one [] ×1\n[] Warning: apply_patch was requested via shell_command. [] ×1\n"},
		// A compaction's summary leads the next prompt.
		{"compacted", user("one") + answer + `{"type":"compacted","payload":{"message":"the summary"}}` + "\n" + user("two") + answer,
			"[] one [] ×1\n---\n[the summary] two [] ×1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := parseCodexAll("r.jsonl", []byte(tc.rollout))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range recs {
				got = append(got, shape(r))
			}
			if s := strings.Join(got, "---\n"); s != tc.want {
				t.Errorf("turns:\n%swant:\n%s", s, tc.want)
			}
		})
	}
}

// TestGeminiContextTurns: the session context Gemini CLI sends first, and
// the editor's context it sends before a prompt, are the prompt's turn's
// context, as Contents of their own; after a compression the summary is
// context too, of the first prompt after it, and the answer Gemini CLI
// writes to it itself is no model call.
func TestGeminiContextTurns(t *testing.T) {
	list := `[{"role":"user","parts":[{"text":"<session_context>\nThis is the Gemini CLI.\n</session_context>"}]},` +
		`{"role":"user","parts":[{"text":"Here is the user's editor context as a JSON object. This is for your information only."},{"text":"{}"}]},` +
		`{"role":"user","parts":[{"text":"why?"}]},{"role":"model","parts":[{"text":"because"}]},` +
		`{"role":"user","parts":[{"text":"Here is a summary of changes in the user's editor context"}]},{"role":"user","parts":[{"text":"and?"}]},{"role":"model","parts":[{"text":"so"}]}]`
	rec, err := parseGeminiCLI("chat.json", []byte(list))
	if err != nil {
		t.Fatal(err)
	}
	want := "[<session_context>\nThis is the Gemini CLI.\n</session_context> Here is the user's editor context as a JSON object. This is for your information only.\n{}] why? [] ×1\n" +
		"[Here is a summary of changes in the user's editor context] and? [] ×1\n"
	if got := shape(rec); got != want {
		t.Errorf("turns:\n%swant:\n%s", got, want)
	}

	rec, err = ParseFile("testdata/gemini-cli/trajectory.json")
	if err != nil {
		t.Fatal(err)
	}
	first := rec.Turns[0]
	if len(first.Context) != 2 || !strings.HasPrefix(first.Context[0].Text, "<session_context>") || !strings.HasPrefix(first.Context[1].Text, "<state_snapshot>") ||
		!strings.HasPrefix(first.Input, "agent teams shouldn't persist") || first.Calls[0].Assistant.Text() == gemCompressionAck {
		t.Errorf("turn 1: context %d, input %.30q, %d calls; want the session context and the snapshot before the first prompt, and no call for the canned answer", len(first.Context), first.Input, len(first.Calls))
	}
	for i, turn := range rec.Turns {
		if len(turn.Calls) == 0 {
			t.Errorf("turn %d (%.30q) answered by no call", i+1, turn.Input)
		}
	}
}

// TestConversationContext imports a harness conversation whose turn has
// context messages: they stay the turn's, and each counts in the length
// of the requests that follow.
func TestConversationContext(t *testing.T) {
	conv := harness.NewConversation("c")
	conv.Turns = []*harness.Turn{{Index: 1, Input: "q", Context: []harness.ContextMessage{{Text: "env"}, {Text: "skill", AfterInput: true}},
		Rounds: []*harness.Round{{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("a")}}}}}}
	data, err := json.Marshal(conv)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := parseConversation("c.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := shape(rec), "[env] q [skill] ×1\n"; got != want {
		t.Errorf("turns:\n%swant:\n%s", got, want)
	}
	if c := rec.Turns[0].Calls[0]; c.Request != 3 {
		t.Errorf("the answer follows %d messages, want the input and its two context messages", c.Request)
	}
}
