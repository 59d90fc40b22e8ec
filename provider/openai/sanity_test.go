package openai

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wiretest"
)

// TestInsaneRepliesAreRefused: usage no model can report, or a choice with
// nothing in it, is an error naming the problem.
func TestInsaneRepliesAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"negative prompt", completion("hi", "", "stop", `{"prompt_tokens":-1,"completion_tokens":1,"total_tokens":0}`), "input tokens -1"},
		{"negative completion", completion("hi", "", "stop", `{"prompt_tokens":1,"completion_tokens":-3,"total_tokens":0}`), "output tokens -3"},
		{"max int64", completion("hi", "", "stop", `{"prompt_tokens":9223372036854775807,"completion_tokens":1,"total_tokens":0}`), "input tokens 9223372036854775807"},
		{"cached above prompt", completion("hi", "", "stop", `{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11,"prompt_tokens_details":{"cached_tokens":20}}`), "cached tokens 20"},
		{"empty choice", `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0}]}`, "empty choice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := wiretest.New(t)
			srv.Enqueue(wiretest.JSON(tc.body))
			resp, err := newTestModel(t, srv, nil).Generate(context.Background(), &harness.Request{Messages: []harness.Message{{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart("go")}}}})
			if err == nil {
				t.Fatalf("accepted: %+v", resp)
			}
			if !errors.Is(err, harness.ErrInvalidResponse) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrInvalidResponse mentioning %q", err, tc.want)
			}
		})
	}
}
