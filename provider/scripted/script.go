package scripted

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/agentharness/harness"
)

// Script is a sequence of model steps.
type Script struct {
	Description string `json:"description,omitempty"`
	Steps       []Step `json:"steps"`
}

// Step is one model reply and what the request that gets it must look like.
type Step struct {
	Expect    *Expect `json:"expect,omitempty"`
	Text      string  `json:"text,omitempty"`
	ToolCalls []Call  `json:"tool_calls,omitempty"`
	// Usage, when set, is reported as is (its input, cached and output
	// counts) instead of being computed.
	Usage *harness.Usage `json:"usage,omitempty"`
}

// Call is a tool call in a step. Args is any JSON value; ArgsRaw, when set,
// is sent verbatim (to script invalid JSON).
type Call struct {
	ID      string          `json:"id,omitempty"`
	Name    string          `json:"name"`
	Args    json.RawMessage `json:"args,omitempty"`
	ArgsRaw *string         `json:"args_raw,omitempty"`
}

// Expect lists what the request of a step must satisfy. Zero fields are not
// checked.
type Expect struct {
	// Turn and Round must match the request's position (both from 1).
	Turn  int `json:"turn,omitempty"`
	Round int `json:"round,omitempty"`
	// Final requires tools to be withheld (true) or offered (false).
	Final *bool `json:"final,omitempty"`
	// ToolsInclude and ToolsExclude name tools that must or must not be
	// offered; Tools, when set, is the exact number offered.
	ToolsInclude []string `json:"tools_include,omitempty"`
	ToolsExclude []string `json:"tools_exclude,omitempty"`
	Tools        *int     `json:"tools,omitempty"`
	// Contains lists strings that must appear in the request's messages;
	// NotContains strings that must not.
	Contains    []string `json:"contains,omitempty"`
	NotContains []string `json:"not_contains,omitempty"`
	// LastToolContains must appear in the newest tool message.
	LastToolContains []string `json:"last_tool_contains,omitempty"`
	// MaxEvidenceChars bounds the tool-result characters of the request.
	MaxEvidenceChars int `json:"max_evidence_chars,omitempty"`
}

// Parse reads a script from JSON. Unknown fields are errors, so a typo in
// a script does not silently drop an expectation.
func Parse(data []byte) (*Script, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("scripted: %w", describeJSONError(data, err))
	}
	if len(s.Steps) == 0 {
		return nil, fmt.Errorf("scripted: the script has no steps")
	}
	for i, st := range s.Steps {
		if st.Text == "" && len(st.ToolCalls) == 0 {
			return nil, fmt.Errorf("scripted: step %d has neither text nor tool calls", i+1)
		}
		for j, c := range st.ToolCalls {
			if c.Name == "" {
				return nil, fmt.Errorf("scripted: step %d, tool call %d has no name", i+1, j+1)
			}
		}
	}
	return &s, nil
}

// Load reads a script file.
func Load(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scripted: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// describeJSONError adds the line and column of a syntax or type error.
func describeJSONError(data []byte, err error) error {
	var off int64 = -1
	switch e := err.(type) {
	case *json.SyntaxError:
		off = e.Offset
	case *json.UnmarshalTypeError:
		off = e.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return err
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - int64(bytes.LastIndexByte(data[:off], '\n'))
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}
