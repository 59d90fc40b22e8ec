package replay

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentharness/harness"
)

// cxExecEvent is one line of codex exec --json: a thread or turn event, or
// an item (the agent's message or reasoning, a command it ran, a file
// change, an MCP tool call, a web search) started, updated or completed.
type cxExecEvent struct {
	Type     string      `json:"type"`
	ThreadID string      `json:"thread_id"`
	Item     *cxExecItem `json:"item"`
}

type cxExecItem struct {
	ID               string          `json:"id"`
	Type             string          `json:"type"`
	Text             string          `json:"text"`
	Message          string          `json:"message"`
	Command          string          `json:"command"`
	AggregatedOutput string          `json:"aggregated_output"`
	ExitCode         *int            `json:"exit_code"`
	Status           string          `json:"status"`
	Changes          json.RawMessage `json:"changes"`
	Server           string          `json:"server"`
	Tool             string          `json:"tool"`
	Arguments        json.RawMessage `json:"arguments"`
	Result           *struct {
		Content json.RawMessage `json:"content"`
	} `json:"result"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Query string `json:"query"`
}

// isCodexExec reports whether a record is an event of codex exec --json.
func isCodexExec(f map[string]json.RawMessage) bool {
	typ := jsonString(f["type"])
	return (typ == "thread.started" && has(f, "thread_id")) ||
		(strings.HasPrefix(typ, "item.") && has(f, "item")) || typ == "turn.started"
}

// parseCodexExec imports what codex exec --json printed: each turn.started
// a turn (its prompt is not printed), each completed command, file change
// or MCP tool call one model call whose text is the agent's messages and
// reasoning since the call before, answered by its output; the closing
// agent message the turn's last call. The events mark no model call's end
// and give usage per turn only, so the calls are counted one per tool
// item and carry no usage.
func parseCodexExec(name string, data []byte) (*Recording, error) {
	src := &source{name: name, data: data}
	rec := &Recording{Source: name, Format: formatCodex, ID: strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))}
	var text []string // the agent's text since the last call
	turn := func() *Turn {
		if len(rec.Turns) == 0 {
			rec.Turns = append(rec.Turns, &Turn{})
		}
		return rec.Turns[len(rec.Turns)-1]
	}
	n, reasoning := 0, 0
	call := func(off int64) *Call {
		n++
		c := &Call{Request: n - 1, Offset: off, Assistant: harness.Message{Role: harness.RoleAssistant}}
		if len(text) > 0 {
			c.Assistant.Parts = []harness.Part{harness.TextPart(strings.Join(text, "\n\n"))}
			text = nil
		}
		turn().Calls = append(turn().Calls, c)
		return c
	}
	partial, err := records(src)(func(v rawValue, path string) error {
		var e cxExecEvent
		if err := src.decodeAt(v, path, &e); err != nil {
			return err
		}
		switch {
		case e.Type == "thread.started":
			rec.ID = e.ThreadID
		case e.Type == "turn.started":
			if len(rec.Turns) > 0 && len(text) > 0 {
				call(v.off)
			}
			rec.Turns = append(rec.Turns, &Turn{})
		case e.Type == "item.completed" && e.Item != nil:
			it := e.Item
			switch it.Type {
			case "agent_message":
				text = append(text, it.Text)
			case "reasoning":
				reasoning++
			case "command_execution", "file_change", "mcp_tool_call", "web_search":
				c := call(v.off)
				tc, out, isErr := cxExecCall(it)
				c.Assistant.ToolCalls = []harness.ToolCall{tc}
				c.addResult(textResult(tc.ID, out, isErr, v.off))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(text) > 0 {
		call(int64(len(data)))
	}
	if rec.Calls() == 0 {
		return nil, src.errAt(0, "", "no item of the agent", ErrNoModelCall)
	}
	rec.Warnings = append(rec.Warnings, notRecorded(formatCodex, true, true),
		"codex exec --json output records the commands the agent ran and their outputs, the file changes, MCP calls and its messages, "+
			"not the prompts, where one model call ends or each call's usage: each command is counted as a model call of its own (its rollout under ~/.codex/sessions records them all)")
	if reasoning > 0 {
		rec.Warnings = append(rec.Warnings, fmt.Sprintf("%d reasoning items left out", reasoning))
	}
	if partial {
		rec.Warnings = append(rec.Warnings, incompleteLine("output"))
	}
	return rec, nil
}

// cxExecCall is the call an exec item stands for, its output and whether
// it failed: a command as Codex's shell tool, a file change as
// apply_patch, an MCP call as the server's tool, a search as web_search.
func cxExecCall(it *cxExecItem) (harness.ToolCall, string, bool) {
	id := "exec_" + it.ID
	failed := it.Status == "failed"
	switch it.Type {
	case "command_execution":
		args, _ := json.Marshal(map[string]string{"command": it.Command})
		return harness.ToolCall{ID: id, Name: "shell", Args: args}, it.AggregatedOutput, failed || (it.ExitCode != nil && *it.ExitCode != 0)
	case "file_change":
		args, _ := json.Marshal(map[string]json.RawMessage{"changes": it.Changes})
		return harness.ToolCall{ID: id, Name: "apply_patch", Args: args}, it.Status, failed
	case "mcp_tool_call":
		out := ""
		if it.Result != nil {
			out, _ = cxOutput(it.Result.Content)
		}
		if it.Error != nil {
			out, failed = it.Error.Message, true
		}
		return harness.ToolCall{ID: id, Name: "mcp__" + it.Server + "__" + it.Tool, Args: compactJSON(it.Arguments)}, out, failed
	}
	args, _ := json.Marshal(map[string]string{"query": it.Query})
	return harness.ToolCall{ID: id, Name: "web_search", Args: args}, "", failed
}
