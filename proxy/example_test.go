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
	"time"

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
		// The model asks for the next file: the client's next request
		// carries that call.
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_6","type":"function",`+
			`"function":{"name":"shell","arguments":"{\"cmd\":\"cat file6\"}"}}]}}],"usage":{"prompt_tokens":9,"completion_tokens":1}}`)
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

// ExampleOptions_clearWhenIdle shows the clear after a pause: a Chat
// Completions conversation of six tool rounds goes quiet for 61 minutes,
// longer than OpenAI's prompt cache surely lives, so the next request
// carries the two results outside the newest four rounds as one-line
// placeholders, each naming a file with the whole result. The clock is a
// stand-in for the proxy's (Options.Now); NoClearWhenIdle turns this off.
func ExampleOptions_clearWhenIdle() {
	var got []byte
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		// The model asks for the next file: the client's next request
		// carries that call.
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_6","type":"function",`+
			`"function":{"name":"shell","arguments":"{\"cmd\":\"cat file6\"}"}}]}}],"usage":{"prompt_tokens":9,"completion_tokens":1}}`)
	}))
	defer upstream.Close()
	ws, _ := os.MkdirTemp("", "proxy-example-")
	defer os.RemoveAll(ws)
	clock := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	px, err := proxy.New(&proxy.Options{Upstream: upstream.URL, Workspace: ws, Now: func() time.Time { return clock }})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer px.Close()
	front := httptest.NewServer(px)
	defer front.Close()

	send := func(rounds int) {
		msgs := []any{map[string]any{"role": "user", "content": "Summarise the six files."}}
		for i := 1; i <= rounds; i++ {
			id := fmt.Sprintf("call_%d", i)
			msgs = append(msgs,
				map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": id, "type": "function",
					"function": map[string]any{"name": "shell", "arguments": fmt.Sprintf(`{"cmd":"cat file%d"}`, i)}}}},
				map[string]any{"role": "tool", "tool_call_id": id, "content": strings.Repeat(fmt.Sprintf("text of file number %d\n", i), 50)})
		}
		body, _ := json.Marshal(map[string]any{"model": "m", "messages": msgs})
		if resp, err := http.Post(front.URL+"/v1/chat/completions", "application/json", strings.NewReader(string(body))); err == nil {
			resp.Body.Close()
		}
		_ = px.Flush(context.Background())
	}
	send(5)
	clock = clock.Add(61 * time.Minute) // the answer was relayed; the agent's tool runs an hour
	send(6)

	var sent struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(got, &sent)
	for i := 2; i < len(sent.Messages); i += 2 {
		shown := sent.Messages[i].Content
		fmt.Printf("round %d: cleared %v\n", i/2, strings.HasPrefix(shown, "[harness proxy: cleared after an idle pause"))
	}
	st := px.Stats()
	fmt.Println("idle clears:", st.IdleClears, "results cleared:", st.IdleClearedResults, "cache breaks:", st.CacheBreaks)
	// Output:
	// round 1: cleared true
	// round 2: cleared true
	// round 3: cleared false
	// round 4: cleared false
	// round 5: cleared false
	// round 6: cleared false
	// idle clears: 1 results cleared: 2 cache breaks: 1
}
