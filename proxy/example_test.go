package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/agentharness/harness/proxy"
)

// Example puts the proxy between a Chat Completions client and an
// upstream, and shows what reaches the upstream of a 100 KB tool result:
// a model copy within the 24 KiB ceiling that names the spill file
// holding every byte.
func Example() {
	var got []byte
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"ok"}}],"usage":{"prompt_tokens":9,"completion_tokens":1}}`)
	}))
	defer upstream.Close()
	ws, _ := os.MkdirTemp("", "proxy-example-")
	defer os.RemoveAll(ws)

	px, err := proxy.New(&proxy.Options{Upstream: upstream.URL, Workspace: ws})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer px.Close()
	front := httptest.NewServer(px) // the agent's base URL
	defer front.Close()

	output := strings.Repeat("a line of build output\n", 4500) // 103,500 bytes
	body, _ := json.Marshal(map[string]any{"model": "m", "messages": []any{
		map[string]any{"role": "user", "content": "Why does the build fail?"},
		map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "call_1", "type": "function",
			"function": map[string]any{"name": "shell", "arguments": `{"cmd":"make"}`}}}},
		map[string]any{"role": "tool", "tool_call_id": "call_1", "content": output},
	}})
	resp, err := http.Post(front.URL+"/v1/chat/completions", "application/json", strings.NewReader(string(body)))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()

	var sent struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(got, &sent)
	shown := sent.Messages[2].Content
	fmt.Println("client sent", len(output), "bytes of output")
	fmt.Println("upstream got at most 24 KiB:", len(shown) <= 24<<10)
	fmt.Println("marked with the spill path:", strings.Contains(shown, ws+"/.harness/spill/"))
	_ = px.Flush(context.Background()) // the answer is counted once relayed
	st := px.Stats()
	fmt.Println("results decided:", st.ResultsDecided, "cut:", st.ResultsCut, "cache breaks:", st.CacheBreaks)
	// Output:
	// client sent 103500 bytes of output
	// upstream got at most 24 KiB: true
	// marked with the spill path: true
	// results decided: 1 cut: 1 cache breaks: 0
}
