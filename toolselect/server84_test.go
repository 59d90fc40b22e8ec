package toolselect

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/mcptool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// server84 is an MCP server, written with the go-sdk, offering the 84
// tools of the fixture; each answers with its name and arguments.
func server84(t *testing.T) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "connector84", Version: "1"}, &mcp.ServerOptions{PageSize: 25})
	no := false
	for _, ft := range loadTools(t) {
		ann := &mcp.ToolAnnotations{ReadOnlyHint: ft.ReadOnly, OpenWorldHint: &no}
		if !ft.ReadOnly {
			d := ft.Destructive
			ann.DestructiveHint = &d
		}
		name := ft.Name
		s.AddTool(&mcp.Tool{Name: name, Description: ft.Description, InputSchema: ft.InputSchema, Annotations: ann},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s(%s) ok", name, req.Params.Arguments)}}}, nil
			})
	}
	return s
}

// tools84 connects to server84 through mcptool (in memory) and returns
// the harness tools.
func tools84(t *testing.T) []harness.Tool {
	srv := server84(t)
	sc := mcptool.ServerConfig{Name: "connector", Transport: func(ctx context.Context) (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
	ctx := context.Background()
	set, err := mcptool.Open(ctx, &mcptool.Config{Servers: []mcptool.ServerConfig{sc}}, &mcptool.Options{StartTimeout: hangBound, CallTimeout: hangBound})
	t.Cleanup(func() { set.Close() })
	if err != nil {
		t.Fatal(err)
	}
	tools, skipped, err := set.Tools(ctx)
	if err != nil || len(skipped) > 0 || len(tools) != 84 {
		t.Fatalf("%d tools, skipped %v, %v", len(tools), skipped, err)
	}
	return tools
}

// step is what the scripted model does in one round: call tools, or
// answer (no calls).
type step []string

// scriptedRun runs turns against an agent whose model follows script[turn]
// and records the tool names offered in every request.
type scriptedRun struct {
	offered [][][]string // turn → round → tool names
	results []*harness.Result
	missing []string // calls the script wanted to make to a tool not offered
}

func runScript(t *testing.T, tools []harness.Tool, sel harness.Selector, inputs []string, script [][]step) *scriptedRun {
	t.Helper()
	run := &scriptedRun{}
	model := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		turn, round := req.Turn-1, req.Round-1
		for len(run.offered) <= turn {
			run.offered = append(run.offered, nil)
		}
		var offered []string
		for _, s := range req.Tools {
			offered = append(offered, s.Name)
		}
		run.offered[turn] = append(run.offered[turn], offered)
		msg := harness.Message{Role: harness.RoleAssistant}
		if round < len(script[turn]) {
			for i, name := range script[turn][round] {
				if !slices.Contains(offered, name) {
					run.missing = append(run.missing, fmt.Sprintf("turn %d round %d: %s", turn+1, round+1, name))
				}
				msg.ToolCalls = append(msg.ToolCalls, harness.ToolCall{ID: fmt.Sprintf("c%d_%d_%d", turn, round, i), Name: name, Args: json.RawMessage(`{}`)})
			}
		}
		if len(msg.ToolCalls) == 0 {
			msg.Parts = []harness.Part{harness.TextPart("answer")}
		}
		return &harness.Response{Message: msg}, nil
	})
	agent, err := harness.New(model, &harness.Options{Tools: tools, Selector: sel})
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("c_84")
	for _, in := range inputs {
		res, err := agent.Run(context.Background(), conv, in)
		if err != nil {
			t.Fatal(err)
		}
		run.results = append(run.results, res)
	}
	return run
}

// TestGenerated84ToolServer runs a three-turn conversation over the
// 84-tool MCP server with and without selection: which tools are sent,
// that the must-keep set is honoured, and the schema bytes per turn.
func TestGenerated84ToolServer(t *testing.T) {
	tools := tools84(t)
	inputs := []string{
		"Which of my published posts haven't mentioned the dark mode feature yet?",
		"Thanks. Show me the comments on the second one.",
		"Invite alex@example.com to the workspace as an editor",
	}
	script := [][]step{
		{{"search_posts"}, {"get_post", "get_post"}, {}},
		// A follow-up whose words do not name the earlier tools: the
		// must-keep set carries them.
		{{"list_comments"}, {"get_post"}, {}},
		{{"me"}, {"invite_member"}, {}},
	}
	// Selected afresh each turn (NoSticky) the lists follow the subject;
	// the default keeps or settles them (checked at the end).
	with := runScript(t, tools, &Selector{NoSticky: true}, inputs, script)
	without := runScript(t, tools, nil, inputs, script)
	if len(with.missing) > 0 {
		t.Fatalf("the script needed tools that were not offered: %v", with.missing)
	}

	for turn, rounds := range with.offered {
		// One selection per turn, the same in every round.
		for r := 1; r < len(rounds); r++ {
			if !slices.Equal(rounds[r], rounds[0]) {
				t.Errorf("turn %d: round %d offers other tools than round 1", turn+1, r+1)
			}
		}
		if len(rounds[0]) != 20 {
			t.Errorf("turn %d: %d tools offered", turn+1, len(rounds[0]))
		}
		if !slices.Contains(rounds[0], "me") {
			t.Errorf("turn %d: identity tool me not offered", turn+1)
		}
	}
	// Turn 2 keeps what turn 1 called; turn 3 still has them (within the
	// last 12 tool messages).
	for _, turn := range []int{1, 2} {
		for _, name := range []string{"search_posts", "get_post"} {
			if !slices.Contains(with.offered[turn][0], name) {
				t.Errorf("turn %d: %s (called earlier) not offered", turn+1, name)
			}
		}
	}

	var withBytes, withoutBytes int
	for i := range inputs {
		w, wo := with.results[i], without.results[i]
		if w.Requests != wo.Requests {
			t.Fatalf("turn %d: %d requests with selection, %d without", i+1, w.Requests, wo.Requests)
		}
		if w.ToolSchemas != 20*w.Requests || wo.ToolSchemas != 84*wo.Requests {
			t.Errorf("turn %d: %d and %d schemas for %d requests", i+1, w.ToolSchemas, wo.ToolSchemas, w.Requests)
		}
		if w.ToolSchemaBytes >= wo.ToolSchemaBytes/2 {
			t.Errorf("turn %d: %d schema bytes with selection, %d without", i+1, w.ToolSchemaBytes, wo.ToolSchemaBytes)
		}
		t.Logf("turn %d (%d requests): tool schemas %d → %d, bytes %d → %d (%.1f%%)", i+1, w.Requests,
			wo.ToolSchemas, w.ToolSchemas, wo.ToolSchemaBytes, w.ToolSchemaBytes, 100*float64(w.ToolSchemaBytes)/float64(wo.ToolSchemaBytes))
		withBytes += w.ToolSchemaBytes
		withoutBytes += wo.ToolSchemaBytes
	}
	t.Logf("conversation: %d → %d schema bytes (%.1f%%)", withoutBytes, withBytes, 100*float64(withBytes)/float64(withoutBytes))
	if strings.Join(with.offered[0][0], ",") == strings.Join(with.offered[2][0], ",") {
		t.Error("turns about different things offered the same tools")
	}
	// The default: turn 1 selects; turn 2's comments are not among turn
	// 1's best, so from turn 2 on every tool is offered: the list changes
	// once, not at every turn, and no needed tool is missing.
	sticky := runScript(t, tools, &Selector{}, inputs, script)
	if len(sticky.missing) > 0 {
		t.Fatalf("sticky: the script needed tools that were not offered: %v", sticky.missing)
	}
	changes := 0
	for turn := 1; turn < len(sticky.offered); turn++ {
		if !slices.Equal(sticky.offered[turn][0], sticky.offered[turn-1][0]) {
			changes++
		}
	}
	if len(sticky.offered[0][0]) != 20 || changes > 1 {
		t.Errorf("sticky: turn 1 offered %d tools and the list changed %d times after it; want 20 and at most once", len(sticky.offered[0][0]), changes)
	}
}
