package replayengine_test

import (
	"context"
	"fmt"

	"github.com/agentharness/harness/internal/replayengine"
	"github.com/agentharness/harness/replay"
)

// Replay a recorded chat under "keep everything" and read its figures.
func ExampleReplay() {
	rec, err := replay.ParseFile("../../replay/testdata/chat.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	keepAll := replayengine.Policy{Name: "none", New: func(replayengine.Env) (*replayengine.Config, error) { return &replayengine.Config{}, nil }}
	rep, err := replayengine.Replay(context.Background(), rec, keepAll, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range rep.Calls {
		fmt.Printf("call %d: input %d, cached %d, evidence %d chars\n", c.Index, c.Input, c.Cached, c.EvidenceChars)
	}
	fmt.Printf("needles %d, visible %d\n", rep.Needles, rep.Visible)
	// Output:
	// call 1: input 25, cached 0, evidence 0 chars
	// call 2: input 103, cached 22, evidence 110 chars
	// needles 2, visible 2
}
