package store_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/sqlite"
)

// A conversation is recorded as it runs, loaded to be continued, and a
// result that a guard cut comes back with its model copy only; FullResult fetches
// what the tool really returned.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "store-example")
	defer os.RemoveAll(dir)
	s, err := sqlite.Open(ctx, filepath.Join(dir, ".harness", "harness.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	// A tool whose 1 MB answer a guard cuts to a short preview.
	huge := strings.Repeat("log line\n", 1<<17)
	tool := harness.Tool{
		Spec: harness.ToolSpec{Name: "build", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			res := harness.TextResult(huge)
			res.Model = []harness.Part{harness.TextPart(huge[:18] + "… [1,179,630 bytes cut]")}
			res.Cuts = []harness.Cut{{Kind: harness.CutTruncated, BytesIn: len(huge), BytesOut: 43, Locator: "call:" + call.ID}}
			return res, nil
		},
	}
	model := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		if req.Round == 1 {
			return &harness.Response{Message: harness.Message{ToolCalls: []harness.ToolCall{{ID: "b1", Name: "build", Args: []byte(`{}`)}}}}, nil
		}
		return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart("the build logged a lot")}}}, nil
	})
	agent, err := harness.New(model, &harness.Options{Tools: []harness.Tool{tool}, Recorder: s, Observer: harness.Observer(s.Observe)})
	if err != nil {
		log.Fatal(err)
	}
	conv := harness.NewConversation("c_example")
	if _, err := agent.Run(ctx, conv, "build it"); err != nil {
		log.Fatal(err)
	}

	loaded, err := s.Load(ctx, "c_example")
	if err != nil {
		log.Fatal(err)
	}
	res := loaded.Turns[0].Rounds[0].Results[0]
	fmt.Printf("loaded: partial=%v, model copy %q\n", store.Partial(res), res.ModelText())
	full, err := s.FullResult(ctx, loaded.ID, res.CallID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("full: %d bytes, the same as the tool returned: %v\n", len(full.FullText()), full.FullText() == huge)
	list, _ := s.List(ctx)
	fmt.Printf("listed: %s %q, %d turn, %d call, %d bytes returned, %d shown\n",
		list[0].ID, list[0].Title, list[0].Turns, list[0].Calls, list[0].ResultBytes, list[0].ModelBytes)
	// Output:
	// loaded: partial=true, model copy "log line\nlog line\n… [1,179,630 bytes cut]"
	// full: 1179648 bytes, the same as the tool returned: true
	// listed: c_example "build it", 1 turn, 1 call, 1179648 bytes returned, 43 shown
}
