package openai_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/provider/openai"
)

func ExampleNew() {
	// A loopback server stands in for OpenAI or any compatible server
	// (vLLM, llama.cpp, Ollama, OpenRouter, ...).
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1767225600,"model":"gpt-5-mini",
			"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Hello!"}}],
			"usage":{"prompt_tokens":1500,"completion_tokens":3,"total_tokens":1503,"prompt_tokens_details":{"cached_tokens":1280}}}`)
	}))
	defer srv.Close()

	model, err := openai.New(&openai.Options{Model: "gpt-5-mini", BaseURL: srv.URL + "/v1", APIKey: "sk-example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := model.Generate(context.Background(), &harness.Request{
		Messages: []harness.Message{{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart("Say hello.")}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Message.Text())
	fmt.Printf("input %d (cached %d), output %d\n", resp.Usage.Input, resp.Usage.Cached, resp.Usage.Output)
	// Output:
	// Hello!
	// input 1500 (cached 1280), output 3
}

func ExampleNew_missingKey() {
	_, err := openai.New(&openai.Options{Model: "gpt-5-mini", Getenv: func(string) string { return "" }})
	fmt.Println(err)
	// Output:
	// openai: no API key: set OPENAI_API_KEY (any non-empty value for a server that checks none, such as a local llama.cpp or Ollama)
}
