package tokens_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/tokens"
)

func ExampleO200k() {
	c, err := tokens.O200k()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Count("hello world"), c.Count("The quick brown fox jumps over the lazy dog."))
	// Output: 2 10
}

func ExampleCountRequest() {
	c, _ := tokens.O200k()
	req := &harness.Request{Messages: []harness.Message{
		{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart("hello world")}},
	}}
	// 3 to prime the reply + 4 for the message + 2 for its text.
	fmt.Println(tokens.CountRequest(c, req))
	// Output: 9
}

// A provider whose tokenizer yields 1.3× the o200k count: the wrapper
// learns the factor from the usage the provider reports.
func ExampleCalibrate() {
	c, _ := tokens.O200k()
	cal := tokens.NewCalibrator()
	provider := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		n := tokens.CountRequest(c, req)
		return &harness.Response{Usage: harness.Usage{Input: n * 13 / 10}}, nil
	})
	m := tokens.Calibrate(provider, "claude-sonnet-4-5", c, cal)
	// Requests under 64 counted tokens are too small to calibrate on.
	text := strings.Repeat("Count the tokens of this request the way the model does. ", 10)
	req := &harness.Request{Messages: []harness.Message{{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart(text)}}}}
	for range 3 {
		_, _ = m.Generate(context.Background(), req)
	}
	fmt.Printf("%.1f\n", cal.Factor("claude-sonnet-4-5"))
	// Output: 1.3
}
