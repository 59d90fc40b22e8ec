package replay

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wire/openai"
)

// formatSWEAgent is a SWE-agent trajectory (.traj).
const formatSWEAgent = "swe-agent"

// sweMessage is one message of a trajectory's history.
type sweMessage struct {
	Role       string            `json:"role"`
	Content    json.RawMessage   `json:"content"`
	Action     string            `json:"action"`
	ToolCalls  []openai.ToolCall `json:"tool_calls"`
	ToolCallID []string          `json:"tool_call_ids"`
	IsDemo     bool              `json:"is_demo"`
}

// parseSWEAgent imports a SWE-agent trajectory ({trajectory, history,
// info, …}, as SWE-agent writes to <run>/<instance>/<instance>.traj). The
// history is the conversation: the system message is the system prompt,
// user messages are inputs (the demonstration included: it was sent), and
// each assistant message is one Call. With function calling its
// tool_calls are answered by the tool messages naming their ids; without
// it, the action SWE-agent parsed from the reply becomes one call of tool
// "bash" ({"command": action}) answered by the next user message, the
// observation. The history is what the agent appended, whole: SWE-agent's
// history processors (such as keeping only the last 5 observations)
// changed what the model saw, which the swe-agent preset replays.
// SWE-agent records total tokens for the run (info.model_stats), not per
// call.
func parseSWEAgent(name string, data []byte) (*Recording, error) {
	src := &source{name: name, data: data}
	fields, err := src.objectFields(0, data, "")
	if err != nil {
		return nil, err
	}
	hist, ok := fields["history"]
	if !ok {
		return nil, src.errAt(0, "", `not a SWE-agent trajectory: no "history" field`, nil)
	}
	elems, err := src.arrayElems(hist.off, hist.raw, "history")
	if err != nil {
		return nil, err
	}
	b := &sweBuilder{src: src, pending: map[string]*Call{},
		rec: &Recording{Source: name, Format: formatSWEAgent, ID: strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))}}
	for i, v := range elems {
		if err := b.add(i, v); err != nil {
			return nil, err
		}
	}
	rec := b.rec
	if rec.Calls() == 0 {
		return nil, src.errAt(hist.off, "history", "no assistant message", ErrNoModelCall)
	}
	rec.Model = sweModel(fields)
	if b.fc {
		rec.Warnings = append(rec.Warnings, notRecorded(formatSWEAgent, rec.System == "", true))
	} else {
		rec.Warnings = append(rec.Warnings, "SWE-agent ran without function calling: each action, parsed from the reply, is recorded as a call of tool \"bash\" and the observation after it as its result (the tools are the commands its system prompt documents)")
	}
	rec.Warnings = append(rec.Warnings, "the history is whole: SWE-agent's history processors (such as the last 5 observations only) changed what its model saw")
	if stats, ok := sweStats(fields); ok {
		rec.Warnings = append(rec.Warnings, fmt.Sprintf("usage recorded for the run only (%d tokens sent, %d received over %d calls), not per call", stats.Sent, stats.Received, stats.Calls))
	} else {
		rec.Warnings = append(rec.Warnings, "no usage recorded")
	}
	return rec, nil
}

// sweBuilder builds a recording from a trajectory's history.
type sweBuilder struct {
	src     *source
	rec     *Recording
	pending map[string]*Call // unanswered tool call id → call
	action  *Call            // the text-action call waiting for its observation
	fc      bool             // the run used function calling
}

// add appends history message i.
func (b *sweBuilder) add(i int, v rawValue) error {
	path := fmt.Sprintf("history[%d]", i)
	var m sweMessage
	if err := b.src.decodeAt(v, path, &m); err != nil {
		return err
	}
	text, parts, err := chatContent(m.Content)
	if err != nil {
		return b.src.errAt(v.off, path+".content", err.Error(), nil)
	}
	rec := b.rec
	switch {
	case m.Role == "system" && len(rec.Turns) == 0:
		rec.System = strings.TrimPrefix(rec.System+"\n\n"+text, "\n\n")
	case m.Role == "assistant":
		return b.assistant(i, v, path, &m, parts)
	case m.Role == "tool" || (m.Role == "user" && b.action != nil):
		return b.observation(v, path, &m, text, parts)
	default: // user (or a later system message): an input
		rec.Turns = append(rec.Turns, &Turn{Input: text})
	}
	return nil
}

func (b *sweBuilder) assistant(i int, v rawValue, path string, m *sweMessage, parts []harness.Part) error {
	if len(b.rec.Turns) == 0 {
		b.rec.Turns = append(b.rec.Turns, &Turn{})
	}
	t := b.rec.Turns[len(b.rec.Turns)-1]
	c := &Call{Request: i, Offset: v.off, Assistant: harness.Message{Role: harness.RoleAssistant, Parts: parts}}
	t.Calls = append(t.Calls, c)
	b.action = nil
	for k, tc := range m.ToolCalls {
		args, err := callArgs(tc.Function.Arguments)
		if err != nil {
			return b.src.errAt(v.off, fmt.Sprintf("%s.tool_calls[%d].function.arguments", path, k), err.Error(), nil)
		}
		c.Assistant.ToolCalls = append(c.Assistant.ToolCalls, harness.ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: args})
		b.pending[tc.ID] = c
		b.fc = true
	}
	if len(m.ToolCalls) == 0 && strings.TrimSpace(m.Action) != "" {
		args, _ := json.Marshal(map[string]string{"command": m.Action})
		c.Assistant.ToolCalls = []harness.ToolCall{{ID: fmt.Sprintf("swe_%d", i), Name: "bash", Args: args}}
		b.action = c
	}
	return nil
}

// observation answers the call a tool message names, or the pending text
// action.
func (b *sweBuilder) observation(v rawValue, path string, m *sweMessage, text string, parts []harness.Part) error {
	var c *Call
	var id string
	switch {
	case m.Role == "tool" && len(m.ToolCallID) > 0:
		id = m.ToolCallID[0]
		c = b.pending[id]
		delete(b.pending, id)
	case b.action != nil:
		c, id = b.action, b.action.Assistant.ToolCalls[0].ID
	}
	b.action = nil
	if c == nil {
		return b.src.errAt(v.off, path, "an observation that answers no action before it", nil)
	}
	c.addResult(&Result{CallID: id, Shown: text, Full: parts, Offset: v.off})
	return nil
}

type sweModelStats struct {
	Sent     int `json:"tokens_sent"`
	Received int `json:"tokens_received"`
	Calls    int `json:"api_calls"`
}

func sweStats(fields map[string]rawValue) (sweModelStats, bool) {
	var info struct {
		Stats *sweModelStats `json:"model_stats"`
	}
	if v, ok := fields["info"]; !ok || json.Unmarshal(v.raw, &info) != nil || info.Stats == nil || info.Stats.Calls == 0 {
		return sweModelStats{}, false
	}
	return *info.Stats, true
}

// sweModel reads the model name from the replay config (an object, or a
// JSON string holding one), "" when absent.
func sweModel(fields map[string]rawValue) string {
	v, ok := fields["replay_config"]
	if !ok {
		return ""
	}
	raw := []byte(v.raw)
	if s := jsonString(v.raw); s != "" {
		raw = []byte(s)
	}
	var cfg struct {
		Agent struct {
			Model struct {
				Name string `json:"name"`
			} `json:"model"`
		} `json:"agent"`
	}
	_ = json.Unmarshal(raw, &cfg)
	return cfg.Agent.Model.Name
}
