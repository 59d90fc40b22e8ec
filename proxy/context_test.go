package proxy

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/clientctx"
	"github.com/agentharness/harness/internal/wiretest"
)

// TestBuildHistoryContext: the user items a client adds beside a prompt
// are the turn's context, in order, with where they came; the prompt is
// the input; the conversation's key still reads the first user item.
func TestBuildHistoryContext(t *testing.T) {
	u := func(text string) item { return item{Kind: itemUser, Text: text} }
	c := func(text string) item {
		return item{Kind: itemUser, Text: text, Pieces: []piece{{Text: text, Context: true}}}
	}
	a := item{Kind: itemAssistant, Text: "done"}
	type turn struct {
		input string
		ctx   []harness.ContextMessage
	}
	before := func(s string) harness.ContextMessage { return harness.ContextMessage{Text: s} }
	after := func(s string) harness.ContextMessage { return harness.ContextMessage{Text: s, AfterInput: true} }
	tests := []struct {
		name      string
		items     []item
		turns     []turn
		firstUser string
	}{
		{"no context", []item{u("fix it"), a}, []turn{{"fix it", nil}}, "fix it"},
		{"prompts join", []item{u("one"), u("two"), a}, []turn{{"one\n\ntwo", nil}}, "one"},
		{"before and after", []item{c("agents"), c("env"), u("fix it"), c("skill"), a},
			[]turn{{"fix it", []harness.ContextMessage{before("agents"), before("env"), after("skill")}}}, "agents"},
		{"context of a later turn", []item{c("env"), u("one"), a, c("env 2"), u("two"), a},
			[]turn{{"one", []harness.ContextMessage{before("env")}}, {"two", []harness.ContextMessage{before("env 2")}}}, "env"},
		{"context alone: the last is the input", []item{c("agents"), c("env"), a},
			[]turn{{"env", []harness.ContextMessage{before("agents")}}}, "agents"},
		{"one context message alone", []item{c("env")}, []turn{{"env", nil}}, "env"},
		{"parts of one content", []item{userItem([]string{"<session_context>\ntoday", "why?", "and how?", "Here is the user's editor context: x"}, clientctx.Gemini), a},
			[]turn{{"why?\nand how?", []harness.ContextMessage{before("<session_context>\ntoday"), after("Here is the user's editor context: x")}}},
			"<session_context>\ntoday\nwhy?\nand how?\nHere is the user's editor context: x"},
		{"parts all context", []item{userItem([]string{"<session_context>\ntoday"}, clientctx.Gemini), u("go"), a},
			[]turn{{"go", []harness.ContextMessage{before("<session_context>\ntoday")}}}, "<session_context>\ntoday"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := buildHistory(tt.items)
			var got []turn
			for _, ht := range h.Turns {
				got = append(got, turn{ht.Input, ht.Context})
			}
			if !reflect.DeepEqual(got, tt.turns) {
				t.Errorf("turns %+v, want %+v", got, tt.turns)
			}
			if h.firstUser() != tt.firstUser {
				t.Errorf("FirstUser %q, want %q", h.firstUser(), tt.firstUser)
			}
		})
	}
}

// codexItem and friends write the Responses input items Codex sends.
func codexMsg(role, text string) string {
	typ := "input_text"
	if role == "assistant" {
		typ = "output_text"
	}
	return `{"type":"message","role":"` + role + `","content":[{"type":"` + typ + `","text":` + mustJSON(text) + `}]}`
}

func codexCall(id, cmd string) string {
	return `{"type":"function_call","call_id":"` + id + `","name":"exec_command","arguments":` + mustJSON(`{"cmd":`+mustJSON(cmd)+`}`) + `}`
}

func codexOutput(id, out string) string {
	return `{"type":"function_call_output","call_id":"` + id + `","output":` + mustJSON(out) + `}`
}

func codexBody(items ...string) []byte {
	return []byte(`{"model":"gpt-test","stream":true,"store":false,"prompt_cache_key":"sess-1","instructions":"You are Codex.",` +
		`"input":[` + strings.Join(items, ",") + `],"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object"}}]}`)
}

func geminiContents(contents ...string) []byte {
	return []byte(`{"contents":[` + strings.Join(contents, ",") + `],"systemInstruction":{"parts":[{"text":"You are Gemini CLI."}]}}`)
}

func geminiUser(text string) string {
	return `{"role":"user","parts":[{"text":` + mustJSON(text) + `}]}`
}

const (
	agentsMD  = "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nRun go test before answering.\n</INSTRUCTIONS>"
	envCtx    = "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"
	skillText = "<skill>\n<name>release</name>\nTag, then push.\n</skill>"
)

// TestProxyRecordsContext: the proxy stores a client's context messages
// as the turn's Context and the user's words as its Input (Codex over
// the Responses API, Gemini CLI over the Gemini API, Claude Code over the
// Messages API), and forwards every request byte for byte.
func TestProxyRecordsContext(t *testing.T) {
	tests := []struct {
		name   string
		path   string
		bodies [][]byte
		reply  func(text string, calls []wiretest.Call) wiretest.Reply
		want   []harness.Turn
	}{
		{
			name: "codex", path: "/v1/responses",
			bodies: [][]byte{
				codexBody(codexMsg("developer", "sandbox: workspace-write"), codexMsg("user", agentsMD), codexMsg("user", envCtx),
					codexMsg("user", "fix the build"), codexMsg("user", skillText)),
				codexBody(codexMsg("developer", "sandbox: workspace-write"), codexMsg("user", agentsMD), codexMsg("user", envCtx),
					codexMsg("user", "fix the build"), codexMsg("user", skillText), codexMsg("assistant", "Fixed."),
					codexMsg("user", "<environment_context>\n  <cwd>/repo/sub</cwd>\n</environment_context>"), codexMsg("user", "now the tests")),
			},
			reply: func(text string, calls []wiretest.Call) wiretest.Reply {
				return wiretest.ResponsesStream("gpt-test", text, calls, wiretest.Usage{Input: 10, Output: 2})
			},
			want: []harness.Turn{
				{Index: 1, Input: "fix the build", Context: []harness.ContextMessage{{Text: agentsMD}, {Text: envCtx}, {Text: skillText, AfterInput: true}}},
				{Index: 2, Input: "now the tests", Context: []harness.ContextMessage{{Text: "<environment_context>\n  <cwd>/repo/sub</cwd>\n</environment_context>"}}},
			},
		},
		{
			name: "gemini", path: "/v1beta/models/gemini-test:streamGenerateContent",
			bodies: [][]byte{
				geminiContents(geminiUser("<session_context>\nToday is Tuesday.\n</session_context>"), geminiUser("why does CI fail?")),
				geminiContents(geminiUser("<session_context>\nToday is Tuesday.\n</session_context>"), geminiUser("why does CI fail?"),
					`{"role":"model","parts":[{"text":"A flaky test."}]}`, geminiUser("which one?")),
			},
			reply: func(text string, calls []wiretest.Call) wiretest.Reply {
				return wiretest.GeminiStream("gemini-test", text, calls, wiretest.Usage{Input: 10, Output: 2})
			},
			want: []harness.Turn{
				{Index: 1, Input: "why does CI fail?", Context: []harness.ContextMessage{{Text: "<session_context>\nToday is Tuesday.\n</session_context>"}}},
				{Index: 2, Input: "which one?"},
			},
		},
		{
			// Claude Code 2.1.197 sends the date as a reminder block of
			// the prompt's message.
			name: "claude code", path: "/v1/messages",
			bodies: [][]byte{
				[]byte(`{"model":"claude-test","max_tokens":64,"stream":true,"messages":[{"role":"user","content":[` +
					`{"type":"text","text":"<system-reminder>\nToday's date is 2026-12-02.\n</system-reminder>\n\n"},` +
					`{"type":"text","text":"why does CI fail?","cache_control":{"type":"ephemeral"}}]}]}`),
			},
			reply: func(text string, calls []wiretest.Call) wiretest.Reply {
				return wiretest.AnthropicStream("claude-test", text, calls, wiretest.Usage{Input: 10, Output: 2})
			},
			want: []harness.Turn{
				{Index: 1, Input: "why does CI fail?", Context: []harness.ContextMessage{{Text: "<system-reminder>\nToday's date is 2026-12-02.\n</system-reminder>\n\n"}}},
			},
		},
		{
			// Gemini CLI 0.61 sends its session context as the first part
			// of the prompt's content.
			name: "gemini parts", path: "/v1beta/models/gemini-test:streamGenerateContent",
			bodies: [][]byte{
				geminiContents(`{"role":"user","parts":[{"text":"<session_context>\nToday is Tuesday.\n</session_context>"},{"text":"why does CI fail?"}]}`),
			},
			reply: func(text string, calls []wiretest.Call) wiretest.Reply {
				return wiretest.GeminiStream("gemini-test", text, calls, wiretest.Usage{Input: 10, Output: 2})
			},
			want: []harness.Turn{
				{Index: 1, Input: "why does CI fail?", Context: []harness.ContextMessage{{Text: "<session_context>\nToday is Tuesday.\n</session_context>"}}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, nil)
			for i, body := range tt.bodies {
				r.up.Enqueue(tt.reply("answer", nil))
				if code, _, resp := r.post(tt.path, body, nil); code != 200 {
					t.Fatalf("request %d: status %d: %s", i, code, resp)
				}
				if got := r.up.Requests()[i].Body; string(got) != string(body) {
					t.Errorf("request %d reached the upstream changed:\n%s\nwant\n%s", i, got, body)
				}
			}
			if err := r.px.Close(); err != nil {
				t.Fatal(err)
			}
			got := storedTurns(t, r)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("stored turns\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

// storedTurns loads the rig's one conversation: each turn's index, input
// and context.
func storedTurns(t *testing.T, r *rig) []harness.Turn {
	t.Helper()
	ctx := context.Background()
	list, err := r.st.List(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("stored conversations %v (%v), want one", list, err)
	}
	conv, err := r.st.Load(ctx, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []harness.Turn
	for _, turn := range conv.Turns {
		out = append(out, harness.Turn{Index: turn.Index, Input: turn.Input, Context: turn.Context})
	}
	return out
}

// TestOldStoreJoinedInput: a conversation an earlier proxy stored with
// the client's context joined into the turn's input goes on in the same
// stored turn (no new turn, no new conversation); the next turn is stored
// with its context apart.
func TestOldStoreJoinedInput(t *testing.T) {
	r := newRig(t, nil)
	ctx := context.Background()
	const id = "codex-old"
	joined := agentsMD + "\n\n" + envCtx + "\n\nfix the build"
	old := harness.NewConversation(id)
	old.Turns = []*harness.Turn{{Index: 1, Input: joined, Started: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC), Rounds: []*harness.Round{{
		Index:     1,
		Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: "c1", Name: "exec_command", Args: []byte(`{"cmd":"make"}`)}}},
		Results:   []*harness.ToolResult{{CallID: "c1", Tool: "exec_command", Parts: []harness.Part{harness.TextPart("ok")}, Bytes: 2}},
	}}}}
	if err := r.st.Save(ctx, old); err != nil {
		t.Fatal(err)
	}
	hdr := map[string]string{ConversationHeader: id}
	first := []string{codexMsg("user", agentsMD), codexMsg("user", envCtx), codexMsg("user", "fix the build"), codexCall("c1", "make"), codexOutput("c1", "ok")}
	r.up.Enqueue(wiretest.ResponsesStream("gpt-test", "Built.", nil, wiretest.Usage{Input: 10, Output: 2}))
	if code, _, resp := r.post("/v1/responses", codexBody(first...), hdr); code != 200 {
		t.Fatalf("status %d: %s", code, resp)
	}
	second := append(first, codexMsg("assistant", "Built."), codexMsg("user", envCtx), codexMsg("user", "now the tests"))
	r.up.Enqueue(wiretest.ResponsesStream("gpt-test", "Passing.", nil, wiretest.Usage{Input: 10, Output: 2}))
	if code, _, resp := r.post("/v1/responses", codexBody(second...), hdr); code != 200 {
		t.Fatalf("status %d: %s", code, resp)
	}
	if err := r.px.Close(); err != nil {
		t.Fatal(err)
	}
	conv, err := r.st.Load(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := r.st.List(ctx); len(list) != 1 {
		t.Errorf("%d conversations stored, want the old one only", len(list))
	}
	if len(conv.Turns) != 2 {
		t.Fatalf("%d turns stored, want 2: %v", len(conv.Turns), roundsOf(conv))
	}
	t1, t2 := conv.Turns[0], conv.Turns[1]
	if t1.Input != joined || len(t1.Context) != 0 || len(t1.Rounds) != 2 || t1.Outcome != harness.Answered {
		t.Errorf("turn 1: input %q, %d context, %d rounds, outcome %q; want the stored input, none, 2, answered", t1.Input, len(t1.Context), len(t1.Rounds), t1.Outcome)
	}
	want := []harness.ContextMessage{{Text: envCtx}}
	if t2.Input != "now the tests" || !reflect.DeepEqual(t2.Context, want) {
		t.Errorf("turn 2: input %q, context %+v; want the prompt and %+v", t2.Input, t2.Context, want)
	}
}
