package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store/sqlite"
)

// Record a run in the store, then resume the conversation from it.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "harness-store")
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "harness.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	model := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		n := 0
		for _, m := range req.Messages {
			if m.Role == harness.RoleUser {
				n++
			}
		}
		return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart(fmt.Sprintf("I have seen %d user messages.", n))}}}, nil
	})
	agent, _ := harness.New(model, &harness.Options{Recorder: st, Observer: st.Observe})
	conv := harness.NewConversation("demo")
	if _, err := agent.Run(ctx, conv, "hello"); err != nil {
		fmt.Println(err)
		return
	}

	// Later, maybe in another process: load and continue.
	resumed, err := st.Load(ctx, "demo")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, _ := agent.Run(ctx, resumed, "and again")
	fmt.Println(res.Answer)
	list, _ := st.List(ctx)
	fmt.Println(list[0].ID, list[0].Turns, "turns")
	// Output:
	// I have seen 2 user messages.
	// demo 2 turns
}
