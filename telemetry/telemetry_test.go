package telemetry_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/provider/scripted"
	"github.com/agentharness/harness/telemetry"
)

// recorded runs one agent turn with telemetry on in-memory exporters and
// returns the finished spans by name and the collected metrics.
func recorded(t *testing.T, script string, tools []harness.Tool, guards []harness.Guard) (map[string][]sdktrace.ReadOnlySpan, metricdata.ResourceMetrics, *harness.Result) {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tel, err := telemetry.New(&telemetry.Options{TracerProvider: tp, MeterProvider: mp, Provider: "openai", Model: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := scripted.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	var seen atomic.Int32 // the observer is called from parallel calls
	agent, err := harness.New(scripted.New(s, nil), &harness.Options{
		Tools: tools, Guards: guards, Workspace: t.TempDir(),
		Observer: tel(func(harness.Event) { seen.Add(1) }),
	})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := agent.Run(context.Background(), harness.NewConversation("c_tel"), "go")
	if seen.Load() == 0 {
		t.Error("the wrapped observer saw no event")
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, sp := range spans.Ended() {
		byName[sp.Name()] = append(byName[sp.Name()], sp)
	}
	if n := len(spans.Started()) - len(spans.Ended()); n != 0 {
		t.Errorf("%d spans left open", n)
	}
	return byName, rm, res
}

func attrs(sp sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range sp.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func tool(name string, fn harness.ToolFunc) harness.Tool {
	return harness.Tool{Spec: harness.ToolSpec{Name: name, Risk: harness.ReadOnly}, Func: fn}
}

func TestSpansFollowGenAIConventions(t *testing.T) {
	big := tool("read_big", func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
		return harness.TextResult(strings.Repeat("a line of a large file\n", 5000)), nil
	})
	fail := tool("fail", func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
		return nil, errors.New("disk full")
	})
	spans, rm, res := recorded(t, `{"steps":[
		{"tool_calls":[{"id":"call_big","name":"read_big","args":{}},{"id":"call_fail","name":"fail","args":{}}],
		 "usage":{"input":1200,"cached":1000,"output":30}},
		{"text":"done","usage":{"input":9000,"cached":1100,"output":5}}]}`,
		[]harness.Tool{big, fail}, []harness.Guard{(&guard.ResultPolicy{MaxBytes: 4096}).Guard()})
	if res.Outcome != harness.Answered {
		t.Fatalf("outcome %s", res.Outcome)
	}

	turn := spans["invoke_agent harness"]
	if len(turn) != 1 {
		t.Fatalf("turn spans: %v", spans)
	}
	ta := attrs(turn[0])
	if ta["gen_ai.operation.name"].AsString() != "invoke_agent" || ta["gen_ai.conversation.id"].AsString() != "c_tel" ||
		ta["gen_ai.usage.input_tokens"].AsInt64() != 10200 || ta["gen_ai.usage.cache_read.input_tokens"].AsInt64() != 2100 ||
		ta["harness.turn.outcome"].AsString() != "answered" {
		t.Errorf("turn span %v", ta)
	}

	chats := spans["chat gpt-test"]
	if len(chats) != 2 {
		t.Fatalf("%d chat spans", len(chats))
	}
	for _, c := range chats {
		if c.Parent().SpanID() != turn[0].SpanContext().SpanID() {
			t.Error("a chat span is not a child of the turn's")
		}
	}
	first := attrs(chats[0])
	if attrs(chats[1])["harness.round"].AsInt64() == 1 {
		first = attrs(chats[1])
	}
	for k, want := range map[attribute.Key]int64{
		"gen_ai.usage.input_tokens": 1200, "gen_ai.usage.cache_read.input_tokens": 1000, "gen_ai.usage.output_tokens": 30,
	} {
		if got := first[k].AsInt64(); got != want {
			t.Errorf("round 1 %s = %d, want %d", k, got, want)
		}
	}
	if first["gen_ai.operation.name"].AsString() != "chat" || first["gen_ai.request.model"].AsString() != "gpt-test" ||
		first["gen_ai.provider.name"].AsString() != "openai" {
		t.Errorf("chat span %v", first)
	}

	bigSpan := spans["execute_tool read_big"]
	if len(bigSpan) != 1 {
		t.Fatalf("tool spans: %v", spans)
	}
	ba := attrs(bigSpan[0])
	if ba["gen_ai.tool.name"].AsString() != "read_big" || ba["gen_ai.tool.call.id"].AsString() != "call_big" ||
		ba["gen_ai.operation.name"].AsString() != "execute_tool" ||
		ba["harness.result.bytes_in"].AsInt64() != 5000*23 || ba["harness.result.bytes_shown"].AsInt64() > 4096 ||
		ba["harness.cut.kind"].AsString() != string(harness.CutSpilled) ||
		!strings.Contains(ba["harness.cut.locator"].AsString(), ".harness/spill/c_tel/call_big") {
		t.Errorf("spilled call's span %v", ba)
	}
	if bigSpan[0].Parent().SpanID() != turn[0].SpanContext().SpanID() || bigSpan[0].StartTime().After(bigSpan[0].EndTime()) {
		t.Error("the tool span is not in the turn, or ends before it starts")
	}
	failSpan := spans["execute_tool fail"]
	if len(failSpan) != 1 || failSpan[0].Status().Code != codes.Error || attrs(failSpan[0])["error.type"].AsString() != "tool_error" {
		t.Errorf("failed call's span %+v", failSpan)
	}

	// The histograms: tokens by type, durations by operation.
	tokens, durations := map[string]int64{}, map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch m.Name {
			case "gen_ai.client.token.usage":
				for _, dp := range m.Data.(metricdata.Histogram[int64]).DataPoints {
					typ, _ := dp.Attributes.Value("gen_ai.token.type")
					tokens[typ.AsString()] += dp.Sum
				}
			case "gen_ai.client.operation.duration":
				if m.Unit != "s" {
					t.Errorf("duration unit %q", m.Unit)
				}
				for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
					op, _ := dp.Attributes.Value("gen_ai.operation.name")
					durations[op.AsString()] += dp.Count
				}
			}
		}
	}
	if tokens["input"] != 10200 || tokens["output"] != 35 {
		t.Errorf("token usage %v", tokens)
	}
	if durations["chat"] != 2 || durations["execute_tool"] != 2 {
		t.Errorf("durations %v", durations)
	}
}

// A model that fails leaves no span open: the chat span ends with the
// turn, marked as an error.
func TestFailedTurnClosesItsSpans(t *testing.T) {
	spans, _, res := recorded(t, `{"steps":[{"expect":{"contains":["never sent"]},"text":"x"}]}`, nil, nil)
	if res.Outcome != harness.Error {
		t.Fatalf("outcome %s", res.Outcome)
	}
	turn := spans["invoke_agent harness"]
	if len(turn) != 1 || turn[0].Status().Code != codes.Error {
		t.Fatalf("turn span %+v", turn)
	}
	if chats := spans["chat gpt-test"]; len(chats) != 1 || chats[0].Status().Code != codes.Error {
		t.Fatalf("chat spans %+v", chats)
	}
}

// With no providers, New records nothing and passes every event on.
func TestNoProvidersIsANoOp(t *testing.T) {
	tel, err := telemetry.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	obs := tel(func(harness.Event) { n++ })
	obs(harness.Event{Kind: harness.EventTurnStart, Conversation: "c", Turn: 1})
	obs(harness.Event{Kind: harness.EventTurnEnd, Conversation: "c", Turn: 1, Outcome: harness.Answered})
	tel(nil)(harness.Event{Kind: harness.EventResponse})
	if n != 2 {
		t.Fatalf("%d events passed on", n)
	}
}
