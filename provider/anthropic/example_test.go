package anthropic_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/provider/anthropic"
)

func ExampleNew() {
	// A loopback server stands in for the Messages API.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",
			"content":[{"type":"text","text":"Hello!"}],"stop_reason":"end_turn","stop_sequence":null,
			"usage":{"input_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":1480,"output_tokens":3}}`)
	}))
	defer srv.Close()

	model, err := anthropic.New(&anthropic.Options{Model: "claude-sonnet-4-5", BaseURL: srv.URL, APIKey: "sk-ant-example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := model.Generate(context.Background(), &harness.Request{
		System:   "Be brief.",
		Messages: []harness.Message{{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart("Say hello.")}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Message.Text())
	// Input counts every prompt token, the cached ones included.
	fmt.Printf("input %d (cached %d), output %d\n", resp.Usage.Input, resp.Usage.Cached, resp.Usage.Output)
	// Output:
	// Hello!
	// input 1500 (cached 1480), output 3
}

func ExampleNew_missingKey() {
	_, err := anthropic.New(&anthropic.Options{Model: "claude-sonnet-4-5", Getenv: func(string) string { return "" }})
	fmt.Println(err)
	// Output:
	// anthropic: no API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a bearer token)
}
