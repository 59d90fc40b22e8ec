package toolselect_test

import (
	"context"
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/toolselect"
)

// exampleTools is the twelve-tool connector of the examples.
func exampleTools() []harness.ToolSpec {
	var tools []harness.ToolSpec
	for _, n := range []string{"me", "list_posts", "get_post", "search_posts", "create_post", "delete_post",
		"list_issues", "create_issue", "close_issue", "assign_issue", "list_invoices", "get_subscription"} {
		tools = append(tools, harness.ToolSpec{Name: n, Description: "The " + n + " tool."})
	}
	return tools
}

// Over the threshold, a Selector offers the must-keep tools and the best
// ranked others, in their original order; an event reports the schema
// bytes offered against offering everything.
func ExampleSelector() {
	tools := exampleTools()
	sel := &toolselect.Selector{Threshold: 8, TopK: 4}
	ctx := harness.WithObserver(context.Background(), func(e harness.Event) {
		fmt.Printf("%s: %d of %d tools\n", e.Policy, e.Data["tools_offered"], e.Data["tools_all"])
	})
	got, _ := sel.Select(ctx, harness.NewConversation("c"), "close the login bug", tools)
	for _, t := range got {
		fmt.Println(t.Name)
	}
	// Output:
	// toolselect: 4 of 12 tools
	// me
	// list_issues
	// create_issue
	// close_issue
}

// An agent calls the selector once per turn and keeps its choice for
// every round of the turn.
func ExampleSelector_agent() {
	var tools []harness.Tool
	for i := range 30 {
		name := fmt.Sprintf("tool_%02d", i)
		tools = append(tools, harness.Tool{
			Spec: harness.ToolSpec{Name: name, Description: "Does thing " + name + ".", Risk: harness.ReadOnly},
			Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
				return harness.TextResult("ok"), nil
			},
		})
	}
	model := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		if req.Round == 1 {
			return &harness.Response{Message: harness.Message{ToolCalls: []harness.ToolCall{{Name: "tool_07", Args: []byte(`{}`)}}}}, nil
		}
		return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart("done")}}}, nil
	})
	agent, _ := harness.New(model, &harness.Options{Tools: tools, Selector: &toolselect.Selector{}})
	res, _ := agent.Run(context.Background(), harness.NewConversation("c"), "run thing tool_07")
	fmt.Println("requests:", res.Requests, "schemas sent:", res.ToolSchemas, "of", 30*res.Requests)
	// Output:
	// requests: 2 schemas sent: 40 of 60
}

// Across turns a conversation keeps its list while it serves the new
// turn, so its requests keep their cached prefix; a turn it does not serve
// offers every tool, from then on.
func ExampleSelector_turns() {
	tools := exampleTools()
	sel := &toolselect.Selector{Threshold: 8, TopK: 5}
	ctx := harness.WithObserver(context.Background(), func(e harness.Event) {
		fmt.Printf("%s: %d of %d tools\n", e.Data["mode"], e.Data["tools_offered"], e.Data["tools_all"])
	})
	conv := harness.NewConversation("c")
	for i, in := range []string{"close the login bug", "close the signup bug too", "what is on my latest invoice?"} {
		conv.Turns = append(conv.Turns, &harness.Turn{Index: i + 1, Input: in})
		sel.Select(ctx, conv, in, tools)
	}
	// Output:
	// ranked: 5 of 12 tools
	// kept: 5 of 12 tools
	// settled: 12 of 12 tools
}

// With many tools, Defer keeps one list for the whole conversation: the
// first turn's selection whole, every other tool as a stub. Pinning the
// agent's own tools keeps them whole whatever the first prompt ranks, so
// only the catalogue is stubbed and the agent never needs a round to
// learn one of its own tools' schema.
func ExampleSelector_defer() {
	tools := []harness.ToolSpec{
		{Name: "shell", Description: "Run a shell command. The output is truncated at 10 KB.", InputSchema: []byte(`{"type":"object","properties":{"command":{"type":"string","description":"the command"}},"required":["command"]}`)},
		{Name: "apply_patch", Description: "Apply a unified diff to the workspace. Fails when a hunk does not match."},
	}
	for _, t := range exampleTools() {
		t.Description += " Returns JSON; see the API guide for the fields."
		tools = append(tools, t)
	}
	sel := &toolselect.Selector{Threshold: 8, TopK: 5, Defer: true, Pinned: []string{"shell", "apply_patch"}}
	got, _ := sel.Select(context.Background(), harness.NewConversation("c"), "close the login bug", tools)
	for _, t := range got {
		form := "stub "
		for _, orig := range tools {
			if orig.Name == t.Name && orig.Description == t.Description {
				form = "whole"
			}
		}
		fmt.Printf("%s %s: %s\n", form, t.Name, t.Description)
	}
	// Output:
	// whole shell: Run a shell command. The output is truncated at 10 KB.
	// whole apply_patch: Apply a unified diff to the workspace. Fails when a hunk does not match.
	// whole me: The me tool. Returns JSON; see the API guide for the fields.
	// stub  list_posts: The list_posts tool.
	// stub  get_post: The get_post tool.
	// stub  search_posts: The search_posts tool.
	// stub  create_post: The create_post tool.
	// stub  delete_post: The delete_post tool.
	// whole list_issues: The list_issues tool. Returns JSON; see the API guide for the fields.
	// stub  create_issue: The create_issue tool.
	// whole close_issue: The close_issue tool. Returns JSON; see the API guide for the fields.
	// stub  assign_issue: The assign_issue tool.
	// stub  list_invoices: The list_invoices tool.
	// stub  get_subscription: The get_subscription tool.
}
