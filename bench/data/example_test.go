package data_test

import (
	"context"
	"fmt"

	"github.com/agentharness/harness/bench/data"
)

// List the shipped real runs per agent and import them.
func ExampleLoad() {
	for _, agent := range data.Agents() {
		recs, err := data.Load(context.Background(), agent)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %d files, %d model contexts\n", agent, len(data.Files(agent)), len(recs))
	}
	// Output:
	// mini-swe-agent: 6 files, 6 model contexts
	// claude-code: 6 files, 7 model contexts
	// codex: 5 files, 5 model contexts
	// swe-agent: 5 files, 5 model contexts
}
