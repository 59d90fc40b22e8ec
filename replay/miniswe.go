package replay

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentharness/harness"
)

// miniSWEBash is the one tool mini-swe-agent offers (its BASH_TOOL), sent
// on every call. Trajectories do not record it, so the importer adds it.
var miniSWEBash = harness.ToolSpec{
	Name:        "bash",
	Description: "Execute a bash command",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","description":"The bash command to execute"}},"required":["command"]}`),
}

// parseMiniSWE imports a mini-swe-agent trajectory (trajectory_format
// "mini-swe-agent-1.1": {info, messages, trajectory_format, instance_id}).
// Each assistant message is one model call, with the usage billed for it
// (extra.response.usage); each tool message's full output is
// extra.raw_output when present (the agent showed outputs of 10,000
// characters and more as head and tail only). Without tool calls
// ("mini-swe-agent-1", or version 2's text and XML configurations) each
// reply's one action is a call of its bash tool answered by the next user
// message (textCall); on the Responses API each response object is a call
// (parseMiniSWEResponses). name is used in errors.
func parseMiniSWE(name string, data []byte) (*Recording, error) {
	src := &source{name: name, data: data}
	fields, err := src.objectFields(0, data, "")
	if err != nil {
		return nil, err
	}
	msgs, ok := fields["messages"]
	if !ok {
		return nil, src.errAt(0, "", `not a mini-swe-agent trajectory: no "messages" field`, nil)
	}
	if tf, ok := fields["trajectory_format"]; ok {
		var f string
		if err := src.decodeAt(tf, "trajectory_format", &f); err != nil {
			return nil, err
		}
		if !strings.HasPrefix(f, "mini-swe-agent") {
			return nil, src.errAt(tf.off, "trajectory_format", fmt.Sprintf("unsupported trajectory format %q", f), nil)
		}
	}
	elems, err := src.arrayElems(msgs.off, msgs.raw, "messages")
	if err != nil {
		return nil, err
	}
	rec, err := miniSWEMessages(src, elems)
	if err != nil {
		return nil, err
	}
	if id, ok := fields["instance_id"]; ok {
		_ = json.Unmarshal(id.raw, &rec.ID)
	}
	if rec.ID == "" {
		rec.ID = strings.TrimSuffix(filepath.Base(name), ".traj.json")
	}
	if info, ok := fields["info"]; ok && rec.Model == "" {
		var in struct {
			Config struct {
				Model struct {
					Name string `json:"model_name"`
				} `json:"model"`
			} `json:"config"`
		}
		if json.Unmarshal(info.raw, &in) == nil {
			rec.Model = in.Config.Model.Name
		}
	}
	return rec, nil
}

// miniSWEMessages reads a trajectory's messages: chat messages (tool calls
// or text actions), or the response objects and items of mini-swe-agent's
// Responses API models; the recording's warnings say what was read how.
func miniSWEMessages(src *source, elems []rawValue) (*Recording, error) {
	if miniSWEResponses(elems) {
		rec, reasoning, err := parseMiniSWEResponses(src, elems)
		if err != nil {
			return nil, err
		}
		rec.Source, rec.Format, rec.Tools = src.name, formatMiniSWE, []harness.ToolSpec{miniSWEBash}
		if reasoning > 0 {
			rec.Warnings = append(rec.Warnings, fmt.Sprintf("%d reasoning items left out (encrypted or summarised; their tokens are in the recorded usage)", reasoning))
		}
		return rec, nil
	}
	b := newChatBuilder(src, formatMiniSWE)
	for i, v := range elems {
		if err := b.add(v, fmt.Sprintf("messages[%d]", i)); err != nil {
			return nil, err
		}
	}
	rec := b.rec
	rec.Tools = []harness.ToolSpec{miniSWEBash}
	if b.textActions > 0 {
		rec.Warnings = append(rec.Warnings, fmt.Sprintf("mini-swe-agent ran without tool calls: the action of %d replies (their one ```bash or mswea_bash_command block) is recorded as a call of tool \"bash\" and the observation after it (a user message) as its result", b.textActions))
	}
	if b.unparsed > 0 {
		rec.Warnings = append(rec.Warnings, fmt.Sprintf("%d replies the agent could not parse are recorded from the format errors that quote them, without usage", b.unparsed))
	}
	return rec, nil
}
