package anthropic

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wiretest"
)

// TestInsaneRepliesAreRefused: an HTTP 200 that is not a message, or whose
// usage no model can report, is an error naming the problem, not an empty
// answer billed at nonsense.
func TestInsaneRepliesAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"empty object", `{}`, "not a message"},
		{"wrong type", `{"type":"error_like","content":[]}`, "not a message"},
		{"negative input", message(`[{"type":"text","text":"hi"}]`, "end_turn", `{"input_tokens":-5,"output_tokens":1}`), "input_tokens -5"},
		{"negative output", message(`[{"type":"text","text":"hi"}]`, "end_turn", `{"input_tokens":5,"output_tokens":-1}`), "output_tokens -1"},
		{"max int64 input", message(`[{"type":"text","text":"hi"}]`, "end_turn", `{"input_tokens":9223372036854775807,"output_tokens":1}`), "input_tokens 9223372036854775807"},
		{"sum overflows", message(`[{"type":"text","text":"hi"}]`, "end_turn", `{"input_tokens":4611686018427387904,"cache_read_input_tokens":4611686018427387904,"output_tokens":1}`), "input_tokens 4611686018427387904"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := wiretest.New(t)
			srv.Enqueue(wiretest.JSON(tc.body))
			resp, err := newTestModel(t, srv, nil).Generate(context.Background(), userRequest("go"))
			if err == nil {
				t.Fatalf("accepted: %+v", resp)
			}
			if !errors.Is(err, harness.ErrInvalidResponse) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrInvalidResponse mentioning %q", err, tc.want)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Fatalf("%d requests: a malformed answer is not retried", n)
			}
		})
	}
}

// TestInsaneStreamsAreRefused: the same checks on a streamed reply; a
// stream with no message_start is not an answer either.
func TestInsaneStreamsAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []wiretest.Event
		want   string
	}{
		{"no message_start", []wiretest.Event{messageStop}, "message_start"},
		{"negative usage", []wiretest.Event{messageStart(`{"input_tokens":3,"output_tokens":1}`), textStart(0), textDelta(0, "hi"), blockStop(0),
			messageDelta("end_turn", `{"output_tokens":-7}`), messageStop}, "output_tokens -7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := wiretest.New(t)
			srv.Enqueue(wiretest.Stream(tc.events...))
			resp, err := newTestModel(t, srv, nil).GenerateStream(context.Background(), userRequest("go"), nil)
			if err == nil {
				t.Fatalf("accepted: %+v", resp)
			}
			if !errors.Is(err, harness.ErrInvalidResponse) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrInvalidResponse mentioning %q", err, tc.want)
			}
		})
	}
}
