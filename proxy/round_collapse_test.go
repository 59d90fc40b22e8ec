package proxy

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
)

// TestCollapseWithinARound: two calls of one round whose results repeat
// the same 40 lines reach the upstream once and as a pointer, the second
// pointing at the first, as under Engine.RunCalls — the proxy hands each
// result the round's earlier results, decided in the same request, so
// Collapse sees them though the transcript does not hold them yet. The
// pointer is kept in the next request.
func TestCollapseWithinARound(t *testing.T) {
	var lines strings.Builder
	for i := range 40 {
		fmt.Fprintf(&lines, "setting_%02d = value %d of the deployment configuration\n", i, i*7)
	}
	text := lines.String()
	body := func(answered bool) []byte {
		msgs := []string{`{"role":"system","content":"You are a test agent."}`, `{"role":"user","content":"Compare the two configs."}`,
			`{"role":"assistant","content":null,"tool_calls":[` +
				`{"id":"call_a","type":"function","function":{"name":"shell","arguments":"{\"command\":\"cat a.conf\"}"}},` +
				`{"id":"call_b","type":"function","function":{"name":"shell","arguments":"{\"command\":\"cat b.conf\"}"}}]}`,
			`{"role":"tool","tool_call_id":"call_a","content":` + mustJSON(text) + `}`,
			`{"role":"tool","tool_call_id":"call_b","content":` + mustJSON(text) + `}`}
		if answered {
			msgs = append(msgs, `{"role":"assistant","content":"They are the same."}`, `{"role":"user","content":"Thanks."}`)
		}
		return []byte(`{"model":"gpt-test","stream":true,"messages":[` + strings.Join(msgs, ",") + `]}`)
	}
	r := newRig(t, nil)
	u := wiretest.Usage{Input: 100, Output: 5}
	r.up.Enqueue(wiretest.ChatStream("gpt-test", "They are the same.", nil, u), wiretest.ChatStream("gpt-test", "You are welcome.", nil, u))
	for i, answered := range []bool{false, true} {
		if status, _, got := r.post("/v1/chat/completions", body(answered), nil); status != 200 {
			t.Fatalf("request %d: status %d: %s", i+1, status, got)
		}
	}
	if err := r.px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := r.up.Requests()
	first, second := contents(t, chatFormat{}, reqs[0].Body), contents(t, chatFormat{}, reqs[1].Body)
	if len(first) != 2 || len(second) != 2 {
		t.Fatalf("results forwarded: %d and %d, want 2 and 2", len(first), len(second))
	}
	a, b := shownChars(t, first[0]), shownChars(t, first[1])
	if a != len(text) {
		t.Errorf("the first call's result shows %d chars, want all %d", a, len(text))
	}
	if b >= len(text)/4 || !strings.Contains(first[1], "call_a") {
		t.Errorf("the second call's result shows %d chars (%.200s), want a short pointer at call_a", b, first[1])
	}
	if first[0] != second[0] || first[1] != second[1] {
		t.Error("the decisions changed in the next request")
	}
}
