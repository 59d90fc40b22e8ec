package replay

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentharness/harness"
)

// Supply is what a user supplies for what a recording's format leaves out:
// Claude Code sessions and Codex rollouts (before Codex 0.9x) do not record
// the system prompt, and neither records the tool schemas, although every
// request the agent sent carried them. Without them a replay counts
// requests smaller than the agent's were, by the same amount in every
// preset, which shrinks none's cost and so makes every ratio look further
// from 1 than it was.
type Supply struct {
	// System is the system prompt to count when the recording has none.
	System string
	// Tools are the tool schemas to offer when the recording has none.
	Tools []harness.ToolSpec
	// SystemTokens, when System is empty and the recording has no system
	// prompt, stands one in of about this many tokens (see standInSystem).
	SystemTokens int
}

// Apply fills in what rec does not record from s, and rewrites rec's
// warnings to say what was supplied. Whatever the recording holds is kept:
// a recorded system prompt or tool list wins over a supplied one (and a
// warning says the supplied one was not used). A nil s changes nothing.
func (s *Supply) Apply(rec *Recording) {
	if s == nil {
		return
	}
	sys, tools := s.System != "" || s.SystemTokens > 0, len(s.Tools) > 0
	if !sys && !tools {
		return
	}
	missSys, missTools := rec.System == "", len(rec.Tools) == 0
	switch {
	case missSys && s.System != "":
		rec.System = s.System
		rec.Warnings = append(rec.Warnings, fmt.Sprintf("system prompt supplied by the user (%d characters), not recorded", utf8.RuneCountInString(s.System)))
	case missSys && s.SystemTokens > 0:
		rec.System = standInSystem(s.SystemTokens)
		rec.Warnings = append(rec.Warnings, fmt.Sprintf("system prompt not recorded: a stand-in of about %d tokens is counted in its place", s.SystemTokens))
	case sys:
		rec.Warnings = append(rec.Warnings, "the supplied system prompt was not used: the recording has its own")
	}
	switch {
	case missTools && tools:
		rec.Tools = s.Tools
		rec.Warnings = append(rec.Warnings, fmt.Sprintf("tool schemas supplied by the user (%d tools), not recorded", len(s.Tools)))
	case tools:
		rec.Warnings = append(rec.Warnings, "the supplied tool schemas were not used: the recording has its own")
	}
	// The importer's "not recorded" caveat now says too much: keep only
	// the part that still holds.
	for i, w := range rec.Warnings {
		if !strings.HasPrefix(w, notRecordedPrefix) {
			continue
		}
		if nw := notRecorded(rec.Format, rec.System == "", len(rec.Tools) == 0); nw != "" {
			rec.Warnings[i] = nw
		} else {
			rec.Warnings = append(rec.Warnings[:i], rec.Warnings[i+1:]...)
		}
		break
	}
}

// standInSystem returns a system prompt of about n tokens (for the
// o200k and cl100k tokenizers: one token per repeated word) to count in
// place of one a recording left out.
func standInSystem(n int) string {
	const head = "[stand-in for the unrecorded system prompt]"
	return head + strings.Repeat(" token", max(0, n-11))
}

const notRecordedPrefix = "not recorded by "

// notRecorded is the importers' caveat about the system prompt and the
// tool schemas a format leaves out; "" when neither is missing.
func notRecorded(format string, system, tools bool) string {
	var what string
	switch {
	case system && tools:
		what = "the system prompt and the tool schemas"
	case system:
		what = "the system prompt"
	case tools:
		what = "the tool schemas"
	default:
		return ""
	}
	return fmt.Sprintf("%s%s: %s that every request sent (often thousands of tokens each), so every preset's figures leave them out; "+
		"supply them (harness audit, bench and replay: --system-file, --tools-file or --assume-system-tokens N; in Go, replay.Supply)", notRecordedPrefix, format, what)
}

// ParseToolSpecs reads tool schemas from a JSON array in any of three
// shapes: harness's and Anthropic's {name, description, input_schema},
// OpenAI's {type: "function", function: {name, description, parameters}},
// and MCP's {name, description, inputSchema}; {"tools": [...]} is read too.
func ParseToolSpecs(data []byte) ([]harness.ToolSpec, error) {
	var wrapped struct {
		Tools json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(data, &wrapped) == nil && len(wrapped.Tools) > 0 {
		data = wrapped.Tools
	}
	var items []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
		MCPSchema   json.RawMessage `json:"inputSchema"`
		Parameters  json.RawMessage `json:"parameters"`
		Function    *struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(data, &items); err != nil {
		return nil, fmt.Errorf("tool schemas: want a JSON array of tools: %w", err)
	}
	out := make([]harness.ToolSpec, 0, len(items))
	for i, it := range items {
		spec := harness.ToolSpec{Name: it.Name, Description: it.Description}
		for _, s := range []json.RawMessage{it.InputSchema, it.MCPSchema, it.Parameters} {
			if len(s) > 0 && spec.InputSchema == nil {
				spec.InputSchema = s
			}
		}
		if it.Function != nil {
			spec = harness.ToolSpec{Name: it.Function.Name, Description: it.Function.Description, InputSchema: it.Function.Parameters}
		}
		if spec.Name == "" {
			return nil, fmt.Errorf("tool schemas: tool %d has no name", i)
		}
		out = append(out, spec)
	}
	return out, nil
}
