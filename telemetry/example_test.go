package telemetry_test

import (
	"context"
	"fmt"
	"sort"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/provider/scripted"
	"github.com/agentharness/harness/telemetry"
)

// Wrap the agent's observer: every turn, model call and tool call becomes
// a span. Here the spans go to an in-memory recorder; a program would use
// an OTLP exporter.
func Example() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	tel, _ := telemetry.New(&telemetry.Options{TracerProvider: tp, Provider: "openai", Model: "gpt-4.1"})

	echo := harness.Tool{Spec: harness.ToolSpec{Name: "echo", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			return harness.TextResult("hi"), nil
		}}
	script, _ := scripted.Parse([]byte(`{"steps":[{"tool_calls":[{"name":"echo","args":{}}]},{"text":"done"}]}`))
	agent, _ := harness.New(scripted.New(script, nil), &harness.Options{Tools: []harness.Tool{echo}, Observer: tel(nil)})
	agent.Run(context.Background(), harness.NewConversation(""), "say hi")

	var names []string
	for _, s := range spans.Ended() {
		names = append(names, s.Name())
	}
	sort.Strings(names)
	fmt.Println(names)
	// Output: [chat gpt-4.1 chat gpt-4.1 execute_tool echo invoke_agent harness]
}
