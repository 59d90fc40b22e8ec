package anthropic

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wiretest"
)

func newTestModel(t *testing.T, srv *wiretest.Server, mod func(*Options)) *Model {
	t.Helper()
	o := &Options{
		Model:          "claude-test",
		BaseURL:        srv.URL,
		APIKey:         "sk-ant-test",
		RetryBaseDelay: time.Millisecond,
		RetryMaxDelay:  2 * time.Millisecond,
		Getenv:         func(string) string { return "" },
	}
	if mod != nil {
		mod(o)
	}
	m, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

func indent(t *testing.T, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		t.Fatalf("invalid JSON %q: %v", raw, err)
	}
	return b.String()
}

// sameJSON compares JSON texts byte for byte after indentation (key order
// included).
func sameJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	if g, w := indent(t, got), indent(t, []byte(want)); g != w {
		t.Errorf("request body:\n%s\nwant:\n%s", g, w)
	}
}

// message is a Messages API reply body with the given content blocks.
func message(content, stop, usage string) string {
	return `{"id":"msg_01","type":"message","role":"assistant","model":"claude-test-2026","content":` + content +
		`,"stop_reason":"` + stop + `","stop_sequence":null,"usage":` + usage + `}`
}

const okBody = `{"id":"msg_ok","type":"message","role":"assistant","model":"claude-test-2026","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}`

func userRequest(text string) *harness.Request {
	return &harness.Request{Messages: []harness.Message{{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart(text)}}}}
}
