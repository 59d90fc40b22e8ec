package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wiretest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// conversationTools are the tools of the recorded conversation.
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

// conversationReplies are the server's streamed answers, one per round.
func conversationReplies() []wiretest.Reply {
	return []wiretest.Reply{
		wiretest.Stream(
			messageStart(`{"input_tokens":1200,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}`),
			textStart(0), textDelta(0, "I'll read both files."), blockStop(0),
			toolStart(1, "toolu_01", "read"), jsonDelta(1, `{"path": "a.txt"}`), blockStop(1),
			toolStart(2, "toolu_02", "read"), jsonDelta(2, `{"path": "b.txt"}`), blockStop(2),
			messageDelta("tool_use", `{"output_tokens":61}`), messageStop),
		wiretest.Stream(
			messageStart(`{"input_tokens":90,"cache_creation_input_tokens":150,"cache_read_input_tokens":1200,"output_tokens":1}`),
			toolStart(0, "toolu_03", "screenshot"), blockStop(0),
			// A cut-off argument object: the agent reports it to the model.
			toolStart(1, "toolu_04", "read"), jsonDelta(1, `{"path": "c.txt"`), blockStop(1),
			toolStart(2, "toolu_05", "read"), jsonDelta(2, `{"path": "missing.txt"}`), blockStop(2),
			messageDelta("tool_use", `{"output_tokens":70}`), messageStop),
		wiretest.Stream(
			messageStart(`{"input_tokens":80,"cache_creation_input_tokens":300,"cache_read_input_tokens":1350,"output_tokens":1}`),
			textStart(0), textDelta(0, "a.txt says alpha, "), textDelta(0, "b.txt says beta."), blockStop(0),
			messageDelta("end_turn", `{"output_tokens":12}`), messageStop),
	}
}

// runConversation plays the recorded conversation through a harness agent
// and returns the request bodies the SDK sent and the turn's result.
func runConversation(t *testing.T) ([]wiretest.Request, *harness.Result, *harness.Conversation, string) {
	t.Helper()
	srv := wiretest.New(t)
	srv.Enqueue(conversationReplies()...)
	var streamed bytes.Buffer
	agent, err := harness.New(newTestModel(t, srv, nil), &harness.Options{
		System: "You are a careful assistant.",
		Tools:  conversationTools(),
		OnText: func(s string) { streamed.WriteString(s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("golden")
	res, err := agent.Run(context.Background(), conv, "What do a.txt and b.txt say?")
	if err != nil {
		t.Fatal(err)
	}
	return srv.Requests(), res, conv, streamed.String()
}

func TestConversationGolden(t *testing.T) {
	reqs, res, conv, streamed := runConversation(t)
	var b bytes.Buffer
	for i, r := range reqs {
		fmt.Fprintf(&b, "### request %d: %s %s\n%s\n\n", i+1, r.Method, r.Path, indent(t, r.Body))
	}
	turn := conv.Turns[0]
	for _, round := range turn.Rounds {
		u, _ := json.Marshal(round.Usage)
		fmt.Fprintf(&b, "### round %d\nassistant text %q\n", round.Index, round.Assistant.Text())
		for _, c := range round.Assistant.ToolCalls {
			// Args verbatim: they may be invalid JSON.
			fmt.Fprintf(&b, "call %s %s args %q\n", c.ID, c.Name, c.Args)
		}
		fmt.Fprintf(&b, "usage %s\n", u)
		for _, r := range round.Results {
			fmt.Fprintf(&b, "result %s (%s) is_error=%v: %q\n", r.CallID, r.Tool, r.IsError, r.ModelText())
		}
		b.WriteByte('\n')
	}
	u, _ := json.Marshal(res.Usage)
	fmt.Fprintf(&b, "### result\noutcome %s, answer %q, streamed %q\nusage %s, effective %.1f\n", res.Outcome, res.Answer, streamed, u, res.Usage.Effective())
	golden(t, "testdata/conversation.golden", b.Bytes())

	if res.Outcome != harness.Answered || res.Answer != "a.txt says alpha, b.txt says beta." {
		t.Errorf("outcome %s, answer %q", res.Outcome, res.Answer)
	}
	if want := (harness.Usage{Input: 1200 + 1440 + 1730, Cached: 2550, CacheWrite: 450, Output: 143}); res.Usage != want {
		t.Errorf("usage = %+v, want %+v", res.Usage, want)
	}
}

// cacheMarker is how a breakpoint appears in a body; the API leaves it out
// of the cache key.
var cacheMarker = regexp.MustCompile(`"cache_control":\{"type":"ephemeral"\},?`)

// TestConsecutiveRequestsShareAPrefix checks what the prompt cache relies
// on: each request of a turn starts with the previous one, byte for byte
// (breakpoint markers aside), and carries a breakpoint where the previous
// one ended, so the entry that request wrote is read by this one.
func TestConsecutiveRequestsShareAPrefix(t *testing.T) {
	reqs, _, _, _ := runConversation(t)
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	type body struct {
		System   json.RawMessage   `json:"system"`
		Tools    json.RawMessage   `json:"tools"`
		Messages []json.RawMessage `json:"messages"`
	}
	parse := func(raw []byte) body {
		var b body
		if err := json.Unmarshal(raw, &b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	for i := 1; i < len(reqs); i++ {
		prev, cur := reqs[i-1].Body, reqs[i].Body
		p, c := parse(prev), parse(cur)
		// Tools and system come first in the cache prefix: unchanged, markers included.
		if !bytes.Equal(p.Tools, c.Tools) || !bytes.Equal(p.System, c.System) {
			t.Errorf("request %d: tools or system differ from request %d", i+1, i)
		}
		// The whole of the previous body up to the end of its messages is a
		// byte prefix of this body.
		pm := cacheMarker.ReplaceAll(prev, nil)
		cm := cacheMarker.ReplaceAll(cur, nil)
		end := bytes.Index(pm, []byte(`],"model"`))
		if end < 0 {
			t.Fatalf("unexpected body layout: %s", prev)
		}
		if !bytes.HasPrefix(cm, pm[:end]) {
			t.Errorf("request %d does not start with request %d:\n%s\n%s", i+1, i, pm[:end], cm)
		}
		// The last message of the previous request is marked in this one.
		last := len(p.Messages) - 1
		if !cacheMarker.Match(p.Messages[last]) || !cacheMarker.Match(c.Messages[last]) {
			t.Errorf("request %d: message %d is not a breakpoint in both requests", i+1, last)
		}
		if n := len(cacheMarker.FindAll(cur, -1)); n > 4 {
			t.Errorf("request %d has %d breakpoints; the API allows 4", i+1, n)
		}
	}
	// The same request built twice gives the same bytes.
	reqs2, _, _, _ := runConversation(t)
	for i := range reqs {
		if !bytes.Equal(reqs[i].Body, reqs2[i].Body) {
			t.Errorf("request %d differs between two runs", i+1)
		}
	}
}

// golden compares got with the file at path, or rewrites it with -update.
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
