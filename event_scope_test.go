package harness_test

import (
	"context"
	"sync"
	"testing"

	"github.com/agentharness/harness"
)

// TestEventsNameTheirTurn: events reported through harness.Emit outside a
// tool call — by a view policy (compaction, stuck detection), by the tool
// selector, by the model while it answers (a provider's retry warning) —
// carry the conversation and turn they belong to, as a tool's do, so a
// store files them under the conversation (Store.Events finds them).
func TestEventsNameTheirTurn(t *testing.T) {
	var (
		mu     sync.Mutex
		events = map[string]harness.Event{}
	)
	emitting := func(name string) func(context.Context) {
		return func(ctx context.Context) {
			harness.Emit(ctx, harness.Event{Kind: harness.EventWarning, Policy: name, Detail: name + " reported"})
		}
	}
	policy := emitting("view-policy")
	selector := emitting("selector")
	model := emitting("model")
	m := &stepModel{steps: []func(*harness.Request) *harness.Response{
		calls(call("a", "echo", `{"text":"hi"}`)), answer("done"),
		calls(call("b", "echo", `{"text":"hi"}`)), answer("done"),
	}}
	opts := &harness.Options{
		Tools: []harness.Tool{echoTool("echo", harness.ReadOnly)},
		Policies: []harness.ViewPolicy{harness.ViewPolicyFunc(func(ctx context.Context, v *harness.View) error {
			policy(ctx)
			return nil
		})},
		Selector: selectorFunc(func(ctx context.Context, tools []harness.ToolSpec) []harness.ToolSpec {
			selector(ctx)
			return tools
		}),
		Observer: func(e harness.Event) {
			mu.Lock()
			defer mu.Unlock()
			if e.Kind == harness.EventWarning {
				events[e.Policy] = e
			}
		},
	}
	a := newAgent(t, harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		model(ctx)
		return m.Generate(ctx, req)
	}), opts)
	conv := harness.NewConversation("conv-1")
	for turn := 1; turn <= 2; turn++ {
		if _, err := a.Run(context.Background(), conv, "say hi"); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"view-policy", "selector", "model"} {
			e, ok := events[name]
			if !ok {
				t.Fatalf("turn %d: no event from the %s", turn, name)
			}
			if e.Conversation != conv.ID || e.Turn != turn {
				t.Errorf("turn %d: the %s's event is of conversation %q turn %d", turn, name, e.Conversation, e.Turn)
			}
		}
	}
}

// selectorFunc is a Selector that calls f with the offered tools.
type selectorFunc func(ctx context.Context, tools []harness.ToolSpec) []harness.ToolSpec

func (f selectorFunc) Select(ctx context.Context, _ *harness.Conversation, _ string, tools []harness.ToolSpec) ([]harness.ToolSpec, error) {
	return f(ctx, tools), nil
}
