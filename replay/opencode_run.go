package replay

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentharness/harness"
)

// ocRunEvent is one line of opencode run --format json: a step's start or
// finish (its usage), a text, reasoning or tool part of the step's
// message, or an error.
type ocRunEvent struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionID"`
	Part      *struct {
		ocPart
		MessageID string `json:"messageID"`
	} `json:"part"`
}

// isOpencodeRun reports whether a record is an event of opencode run
// --format json.
func isOpencodeRun(f map[string]json.RawMessage) bool {
	switch jsonString(f["type"]) {
	case "step_start", "step_finish", "tool_use", "text", "reasoning":
		return has(f, "sessionID") && has(f, "part")
	}
	return false
}

// parseOpencodeRun imports what opencode run --format json printed: each
// step (step_start to step_finish, one model response) is one model call
// with its text and its tool parts, each tool part's output its result,
// and the step's tokens its usage. The prompt is not printed.
func parseOpencodeRun(name string, data []byte) (*Recording, error) {
	src := &source{name: name, data: data}
	rec := &Recording{Source: name, Format: formatOpencode, ID: strings.TrimSuffix(filepath.Base(name), filepath.Ext(name)), Turns: []*Turn{{}}}
	var cur *Call // the step being read
	n, reasoning := 0, 0
	step := func(off int64) *Call {
		if cur == nil {
			n++
			cur = &Call{Request: n - 1, Offset: off, Assistant: harness.Message{Role: harness.RoleAssistant}}
			rec.Turns[0].Calls = append(rec.Turns[0].Calls, cur)
		}
		return cur
	}
	partial, err := records(src)(func(v rawValue, path string) error {
		var e ocRunEvent
		if err := src.decodeAt(v, path, &e); err != nil {
			return err
		}
		if e.SessionID != "" {
			rec.ID = e.SessionID
		}
		if e.Part == nil {
			return nil
		}
		p := &e.Part.ocPart
		switch e.Type {
		case "step_start":
			step(v.off)
		case "text":
			if !p.Synthetic {
				c := step(v.off)
				c.Assistant.Parts = append(c.Assistant.Parts, harness.TextPart(p.Text))
			}
		case "reasoning":
			reasoning++
		case "tool_use":
			c := step(v.off)
			st := p.State
			if st == nil {
				return src.errAt(v.off, path+".part.state", "a tool part without its state", nil)
			}
			c.Assistant.ToolCalls = append(c.Assistant.ToolCalls, harness.ToolCall{ID: p.CallID, Name: p.Tool, Args: compactJSON(st.Input)})
			out, isErr := st.Output, st.Status == "error"
			if isErr && out == "" {
				out = st.Error
			}
			c.addResult(textResult(p.CallID, out, isErr, v.off))
		case "step_finish":
			c := step(v.off)
			if p.Tokens != nil {
				c.Usage, c.HasUsage = p.Tokens.usage(), true
			}
			cur = nil
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if rec.Calls() == 0 {
		return nil, src.errAt(0, "", "no step of the model", ErrNoModelCall)
	}
	rec.Warnings = append(rec.Warnings, notRecorded(formatOpencode, true, true),
		"opencode run --format json output records each step's text, tool calls, their outputs and usage, not the prompt (its session in opencode's database records it)")
	if reasoning > 0 {
		rec.Warnings = append(rec.Warnings, fmt.Sprintf("%d reasoning parts left out (their tokens are in the recorded usage)", reasoning))
	}
	if partial {
		rec.Warnings = append(rec.Warnings, incompleteLine("output"))
	}
	return rec, nil
}
