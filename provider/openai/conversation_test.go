package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wiretest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func conversationTools() []harness.Tool {
	files := map[string]string{"a.txt": "alpha", "b.txt": "beta"}
	return []harness.Tool{
		{Spec: harness.ToolSpec{Name: "read", Description: "Read a file of the workspace.", Risk: harness.ReadOnly,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			Func: func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
				var args struct{ Path string }
				if err := json.Unmarshal(call.Args, &args); err != nil {
					return nil, err
				}
				text, ok := files[args.Path]
				if !ok {
					return harness.ErrorResult("no such file: %s", args.Path), nil
				}
				return harness.TextResult(text), nil
			}},
		{Spec: harness.ToolSpec{Name: "screenshot", Description: "Capture the screen.", Risk: harness.ReadOnly},
			Func: func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
				return &harness.ToolResult{Parts: []harness.Part{harness.TextPart("1x1 screen"), harness.ImagePart("image/png", png)}}, nil
			}},
	}
}

func conversationReplies() []wiretest.Reply {
	return []wiretest.Reply{
		wiretest.JSON(completion("I'll read both files.", `[
			{"id":"call_01","type":"function","function":{"name":"read","arguments":"{\"path\": \"a.txt\"}"}},
			{"id":"call_02","type":"function","function":{"name":"read","arguments":"{\"path\": \"b.txt\"}"}}]`, "tool_calls",
			`{"prompt_tokens":1200,"completion_tokens":61,"total_tokens":1261,"prompt_tokens_details":{"cached_tokens":0}}`)),
		wiretest.JSON(completion("", `[
			{"id":"call_03","type":"function","function":{"name":"screenshot","arguments":"{}"}},
			{"id":"call_04","type":"function","function":{"name":"read","arguments":"{\"path\": \"c.txt\""}},
			{"id":"call_05","type":"function","function":{"name":"read","arguments":"{\"path\": \"missing.txt\"}"}}]`, "tool_calls",
			`{"prompt_tokens":1440,"completion_tokens":70,"total_tokens":1510,"prompt_tokens_details":{"cached_tokens":1152}}`)),
		wiretest.JSON(completion("a.txt says alpha, b.txt says beta.", "", "stop",
			`{"prompt_tokens":1730,"completion_tokens":12,"total_tokens":1742,"prompt_tokens_details":{"cached_tokens":1408}}`)),
	}
}

func runConversation(t *testing.T) ([]wiretest.Request, *harness.Result, *harness.Conversation) {
	t.Helper()
	srv := wiretest.New(t)
	srv.Enqueue(conversationReplies()...)
	agent, err := harness.New(newTestModel(t, srv, nil), &harness.Options{System: "You are a careful assistant.", Tools: conversationTools()})
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("golden")
	res, err := agent.Run(context.Background(), conv, "What do a.txt and b.txt say?")
	if err != nil {
		t.Fatal(err)
	}
	return srv.Requests(), res, conv
}

func TestConversationGolden(t *testing.T) {
	reqs, res, conv := runConversation(t)
	var b bytes.Buffer
	for i, r := range reqs {
		fmt.Fprintf(&b, "### request %d: %s %s\n%s\n\n", i+1, r.Method, r.Path, indent(t, r.Body))
	}
	for _, round := range conv.Turns[0].Rounds {
		u, _ := json.Marshal(round.Usage)
		fmt.Fprintf(&b, "### round %d\nassistant text %q\n", round.Index, round.Assistant.Text())
		for _, c := range round.Assistant.ToolCalls {
			fmt.Fprintf(&b, "call %s %s args %q\n", c.ID, c.Name, c.Args)
		}
		fmt.Fprintf(&b, "usage %s\n", u)
		for _, r := range round.Results {
			fmt.Fprintf(&b, "result %s (%s) is_error=%v: %q\n", r.CallID, r.Tool, r.IsError, r.ModelText())
		}
		b.WriteByte('\n')
	}
	u, _ := json.Marshal(res.Usage)
	fmt.Fprintf(&b, "### result\noutcome %s, answer %q\nusage %s, effective %.1f\n", res.Outcome, res.Answer, u, res.Usage.Effective())
	golden(t, "testdata/conversation.golden", b.Bytes())

	if res.Outcome != harness.Answered || res.Answer != "a.txt says alpha, b.txt says beta." {
		t.Errorf("outcome %s, answer %q", res.Outcome, res.Answer)
	}
	if want := (harness.Usage{Input: 4370, Cached: 2560, Output: 143}); res.Usage != want {
		t.Errorf("usage = %+v, want %+v", res.Usage, want)
	}
}

// TestConsecutiveRequestsShareAPrefix checks what OpenAI's automatic prompt
// cache relies on: each request of a turn starts with the previous one's
// tools and messages, byte for byte.
func TestConsecutiveRequestsShareAPrefix(t *testing.T) {
	reqs, _, _ := runConversation(t)
	type body struct {
		Messages []json.RawMessage `json:"messages"`
		Tools    json.RawMessage   `json:"tools"`
	}
	for i := 1; i < len(reqs); i++ {
		var p, c body
		if err := json.Unmarshal(reqs[i-1].Body, &p); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(reqs[i].Body, &c); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p.Tools, c.Tools) || len(c.Messages) <= len(p.Messages) {
			t.Fatalf("request %d: tools differ or no new messages", i+1)
		}
		for j := range p.Messages {
			if !bytes.Equal(p.Messages[j], c.Messages[j]) {
				t.Errorf("request %d: message %d differs from request %d:\n%s\n%s", i+1, j, i, p.Messages[j], c.Messages[j])
			}
		}
		end := bytes.LastIndex(reqs[i-1].Body, p.Messages[len(p.Messages)-1]) + len(p.Messages[len(p.Messages)-1])
		if !bytes.HasPrefix(reqs[i].Body, reqs[i-1].Body[:end]) {
			t.Errorf("request %d does not start with request %d's messages", i+1, i)
		}
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run go test -update and review the diff):\n%s", path, got)
	}
}
