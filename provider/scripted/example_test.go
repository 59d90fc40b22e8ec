package scripted_test

import (
	"context"
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/provider/scripted"
)

func Example() {
	s, err := scripted.Parse([]byte(`{"steps": [
		{"expect": {"contains": ["capital"]}, "text": "Paris."}
	]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	agent, _ := harness.New(scripted.New(s, nil), nil)
	res, err := agent.Run(context.Background(), harness.NewConversation(""), "What is the capital of France?")
	fmt.Println(res.Answer, res.Outcome, err)
	// Output: Paris. answered <nil>
}
