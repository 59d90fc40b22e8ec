package openai

import (
	"encoding/json"
	"testing"

	"github.com/agentharness/harness"
)

// TestChatUsage: the usage of a chat completion as harness counts it.
func TestChatUsage(t *testing.T) {
	for _, tc := range []struct {
		body string
		want harness.Usage
	}{
		{`{"prompt_tokens":100,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":64}}`, harness.Usage{Input: 100, Cached: 64, Output: 7}},
		{`{"prompt_tokens":5,"completion_tokens":1}`, harness.Usage{Input: 5, Output: 1}},
		{`{}`, harness.Usage{}},
	} {
		var u ChatUsage
		if err := json.Unmarshal([]byte(tc.body), &u); err != nil {
			t.Fatal(err)
		}
		if got := u.Usage(); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.body, got, tc.want)
		}
	}
	if got := (*ChatUsage)(nil).Usage(); got != (harness.Usage{}) {
		t.Errorf("nil: %+v", got)
	}
}

// TestResponsesUsage: a Responses answer's usage as harness counts it,
// the cached tokens read from input_tokens_details.
func TestResponsesUsage(t *testing.T) {
	for _, tc := range []struct {
		body string
		want harness.Usage
	}{
		{`{"input_tokens":100,"input_tokens_details":{"cached_tokens":64},"output_tokens":7}`, harness.Usage{Input: 100, Cached: 64, Output: 7}},
		{`{"input_tokens":5,"output_tokens":1}`, harness.Usage{Input: 5, Output: 1}},
	} {
		var u ResponsesUsage
		if err := json.Unmarshal([]byte(tc.body), &u); err != nil {
			t.Fatal(err)
		}
		if got := u.Usage(); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.body, got, tc.want)
		}
	}
}
