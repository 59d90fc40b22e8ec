package proxy

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wiretest"
)

// responsesAnswer is a whole (not streamed) Responses answer with its id:
// one call of shell, or the final text when call is "".
func responsesAnswer(id, call string) wiretest.Reply {
	out := `{"type":"message","id":"m_` + id + `","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Done."}]}`
	if call != "" {
		out = `{"type":"function_call","id":"fc_` + id + `","call_id":` + mustJSON(call) + `,"name":"shell","arguments":"{\"command\":\"cat package-lock.json\"}","status":"completed"}`
	}
	return wiretest.JSON(`{"id":` + mustJSON(id) + `,"object":"response","status":"completed","model":"gpt-test","output":[` + out +
		`],"usage":{"input_tokens":100,"input_tokens_details":{"cached_tokens":0},"output_tokens":10,"total_tokens":110}}`)
}

// chainRequest is a Responses request continuing answer prev ("" for the
// first) with input items.
func chainRequest(prev string, input ...string) []byte {
	p := ""
	if prev != "" {
		p = `"previous_response_id":` + mustJSON(prev) + `,`
	}
	return []byte(`{"model":"gpt-test","instructions":"You are a test agent.",` + p +
		`"tools":[{"type":"function","name":"shell","parameters":{"type":"object"}}],"input":[` + strings.Join(input, ",") + `]}`)
}

func callOutput(call, text string) string {
	return `{"type":"function_call_output","call_id":` + mustJSON(call) + `,"output":` + mustJSON(text) + `}`
}

// TestResponsesChain: a client that continues each answer by
// previous_response_id sends only the new outputs; the proxy reads them
// in the conversation of the answer they continue, so one conversation
// holds the whole run (its prompt, both rounds, every byte of both
// results), a cut result's marker names its tool, and the request goes
// upstream with only the items the client sent.
func TestResponsesChain(t *testing.T) {
	r := newRig(t, nil)
	r.up.Enqueue(responsesAnswer("resp_1", "call_1"), responsesAnswer("resp_2", "call_2"), responsesAnswer("resp_3", ""))
	lock1, lock2 := lockFile(100_000), strings.ReplaceAll(lockFile(60_000), "pkg-", "lib-")
	for _, body := range [][]byte{
		chainRequest("", `{"role":"user","content":"Which version of zod is locked?"}`),
		chainRequest("resp_1", callOutput("call_1", lock1)),
		chainRequest("resp_2", callOutput("call_2", lock2)),
	} {
		if status, _, got := r.post("/v1/responses", body, nil); status != 200 {
			t.Fatalf("status %d: %s", status, got)
		}
	}
	sent := r.up.Requests()
	var second struct {
		Prev  string `json:"previous_response_id"`
		Input []struct {
			CallID string `json:"call_id"`
			Output string `json:"output"`
		} `json:"input"`
	}
	if err := json.Unmarshal(sent[1].Body, &second); err != nil {
		t.Fatal(err)
	}
	if second.Prev != "resp_1" || len(second.Input) != 1 || second.Input[0].CallID != "call_1" {
		t.Fatalf("the second request went upstream as %.300s", sent[1].Body)
	}
	if out := second.Input[0].Output; len(out) >= len(lock1) || !strings.Contains(out, "[harness: shell returned") {
		t.Errorf("the lock file went upstream as %d bytes, marker: %q", len(out), out[strings.Index(out, "[harness"):][:60])
	}
	if err := r.px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := r.px.Stats(); s.Conversations != 1 || s.Forks != 0 || s.ResultsCut != 2 {
		t.Errorf("%d conversations, %d forks, %d results cut; want 1, 0, 2", s.Conversations, s.Forks, s.ResultsCut)
	}
	turns := storedTurns(t, r)
	if len(turns) != 1 || turns[0].Input != "Which version of zod is locked?" {
		t.Fatalf("stored turns %+v", turns)
	}
	list, _ := r.st.List(context.Background())
	conv, err := r.st.Load(context.Background(), list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, round := range conv.Turns[0].Rounds {
		for _, res := range round.Results {
			if res.Tool != "shell" {
				t.Errorf("result of %s stored as tool %q", res.CallID, res.Tool)
			}
			calls = append(calls, res.CallID)
		}
	}
	if strings.Join(calls, ",") != "call_1,call_2" || conv.Turns[0].Outcome != harness.Answered {
		t.Errorf("stored results %v, outcome %q", calls, conv.Turns[0].Outcome)
	}
	for call, want := range map[string]string{"call_1": lock1, "call_2": lock2} {
		full, err := r.st.FullResult(context.Background(), conv.ID, call)
		if err != nil || full.FullText() != want {
			t.Errorf("stored full result of %s: %d bytes (%v), want %d", call, len(full.FullText()), err, len(want))
		}
	}
}

// TestResponsesChainUnknownAnswer: a request continuing an answer the
// proxy did not relay is a conversation keyed by that answer, never one
// shared with other such requests (two runs alike would share a key of
// their model, instructions and missing prompt); its own answer, continued
// next, keeps the run in that conversation.
func TestResponsesChainUnknownAnswer(t *testing.T) {
	r := newRig(t, nil)
	r.up.Enqueue(responsesAnswer("resp_a2", "call_a2"), responsesAnswer("resp_b2", ""), responsesAnswer("resp_a3", ""))
	for _, body := range [][]byte{
		chainRequest("resp_a1", callOutput("call_a1", "a small output")),
		chainRequest("resp_b1", callOutput("call_b1", "another output")),
		chainRequest("resp_a2", callOutput("call_a2", "the next output")),
	} {
		if status, _, got := r.post("/v1/responses", body, nil); status != 200 {
			t.Fatalf("status %d: %s", status, got)
		}
	}
	if err := r.px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := r.px.Stats(); s.Conversations != 2 || s.Forks != 0 {
		t.Errorf("%d conversations, %d forks; want 2 (one per run), 0", s.Conversations, s.Forks)
	}
}

// TestResponsesStoredConversation: a loop that keeps its history in an
// upstream conversation ("conversation", an id or {"id"}) sends only the
// new items; the proxy reads them after the conversation's history as it
// relayed it, so two runs alike stay two conversations, and each cut
// names its tool.
func TestResponsesStoredConversation(t *testing.T) {
	r := newRig(t, nil)
	r.up.Enqueue(responsesAnswer("resp_1", "call_1"), responsesAnswer("resp_x", "call_x"), responsesAnswer("resp_2", ""))
	stored := func(conv string, input ...string) []byte {
		b := chainRequest("", input...)
		return append([]byte(`{"conversation":`+conv+`,`), b[1:]...)
	}
	prompt := `{"role":"user","content":"Which version of zod is locked?"}`
	for _, body := range [][]byte{
		stored(`"conv_a"`, prompt),
		stored(`{"id":"conv_b"}`, prompt),
		stored(`{"id":"conv_a"}`, callOutput("call_1", lockFile(100_000))),
	} {
		if status, _, got := r.post("/v1/responses", body, nil); status != 200 {
			t.Fatalf("status %d: %s", status, got)
		}
	}
	if err := r.px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := r.px.Stats(); s.Conversations != 2 || s.Forks != 0 || s.ResultsCut != 1 {
		t.Errorf("%d conversations, %d forks, %d cut; want 2, 0, 1", s.Conversations, s.Forks, s.ResultsCut)
	}
	if last := string(r.up.Requests()[2].Body); !strings.Contains(last, `[harness: shell returned`) || !strings.HasPrefix(last, `{"conversation":{"id":"conv_a"}`) {
		t.Errorf("the result went upstream as %.200s", last)
	}
}
