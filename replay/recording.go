package replay

import (
	"encoding/json"
	"time"

	"github.com/agentharness/harness"
)

// The formats importers recognise, as reported in [Recording.Format]; the
// others are beside their importers.
const (
	formatMiniSWE      = "mini-swe-agent"
	formatOpenAI       = "openai-chat"
	formatConversation = "harness-conversation"
	formatStore        = "harness-store"
)

// formats lists the formats the importers recognise, each as reported in
// [Recording.Format].
func formats() []string {
	return []string{formatClaudeCode, formatCodex, formatGeminiCLI, formatOpencode, formatSWEAgent,
		formatMiniSWE, formatOpenAI, formatAnthropic, formatResponses, formatOpenHands, formatConversation, formatStore}
}

// Recording is one recorded agent run in provider-neutral form.
type Recording struct {
	// Source is the file the recording was read from.
	Source string `json:"source"`
	// Format names the format it was imported from: "claude-code",
	// "codex", "gemini-cli", "opencode", "swe-agent", "mini-swe-agent",
	// "openai-chat" (a chat-message list), "anthropic-messages" (one in the
	// Anthropic Messages API's shape), "openai-responses" (Responses API
	// input items), "openhands", "harness-conversation" or
	// "harness-store" (harness's transcript store).
	Format string `json:"format"`
	// ID names the run (an instance id, a conversation id, the file name).
	ID string `json:"id"`
	// Model is the model the run used, when the source says.
	Model string `json:"model,omitempty"`
	// System is the system prompt.
	System string `json:"system,omitempty"`
	// Tools are the tool schemas offered on every call that does not
	// record its own list (Call.Tools), when known, and the tools a
	// replay's selector picks from. For a transcript store they are the
	// union of every list the run offered, in the order first offered.
	Tools []harness.ToolSpec `json:"tools,omitempty"`
	// Turns are the user turns in order.
	Turns []*Turn `json:"turns"`
	// Warnings are the importer's caveats: what a replay of this
	// recording cannot count as the run did (for a transcript store: it
	// predates request recording, or the system prompt changed). Tools
	// that load recordings print them.
	Warnings []string `json:"warnings,omitempty"`
}

// Turn is one user input and the model calls made to answer it.
type Turn struct {
	Input string `json:"input"`
	// Context holds the messages the client sent with Input that are not
	// the user's words (see harness.Turn.Context): the instructions and
	// environment Codex and Gemini CLI send before a session's first
	// prompt, the skill text Codex sends after a prompt that names one. A
	// replay sends each as a user message of its own, where the client
	// sent it; needles already seen in them are no evidence of a result.
	Context []harness.ContextMessage `json:"context,omitempty"`
	Calls   []*Call                  `json:"calls"`
}

// Call is one recorded model call: the assistant message it produced and
// the results of the tool calls that message made.
type Call struct {
	// Request is the number of source messages that preceded the response
	// (the recorded request's length, system prompt included); Offset is
	// the byte offset of the response in the source file.
	Request int   `json:"request"`
	Offset  int64 `json:"offset"`
	// Time is when the source says the response was written, when it
	// records it (Claude Code, Codex and Gemini CLI's session files do,
	// and harness's own store, Round.Answered): what the time between two
	// requests, and so whether a provider's prompt cache had expired, is
	// read from.
	Time time.Time `json:"time,omitzero"`
	// Assistant is the message the model returned.
	Assistant harness.Message `json:"assistant"`
	// Usage is what the provider billed for this call; HasUsage says
	// whether the source recorded it.
	Usage    harness.Usage `json:"usage"`
	HasUsage bool          `json:"has_usage"`
	// Final is set on a synthesis call made with tools withheld.
	Final bool `json:"final,omitempty"`
	// Tools are the tool schemas this call's request sent, when the
	// source recorded them per request (a transcript store does): nil
	// means Recording.Tools, and an empty list that the request sent none
	// (a synthesis call). A replay offers them unless its policy selects
	// tools itself (Config.Selector).
	Tools []harness.ToolSpec `json:"tools,omitzero"`
	// Results answer Assistant.ToolCalls, in call order. A call the run
	// never answered (the last "submit" of a trajectory) has no result.
	Results []*Result `json:"results,omitempty"`
}

// Result is one recorded tool result.
type Result struct {
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	// Full is the untruncated output (mini-swe-agent's extra.raw_output,
	// wrapped as the agent wraps outputs) and Structured any structured
	// content beside it.
	Full       []harness.Part  `json:"full"`
	Structured json.RawMessage `json:"structured,omitempty"`
	// Shown is what the recording agent showed its model; it equals the
	// full text when the recorder cut nothing.
	Shown   string `json:"shown"`
	IsError bool   `json:"is_error,omitempty"`
	// Offset is the byte offset of the result in the source file.
	Offset int64 `json:"offset"`
}

// FullText is the text of the full output.
func (r *Result) FullText() string { return harness.Message{Parts: r.Full}.Text() }

// Calls counts the recorded model calls.
func (rec *Recording) Calls() int {
	n := 0
	for _, t := range rec.Turns {
		n += len(t.Calls)
	}
	return n
}

// RecordedUsage sums the usage the provider reported for every call.
func (rec *Recording) RecordedUsage() harness.Usage {
	var u harness.Usage
	for _, t := range rec.Turns {
		for _, c := range t.Calls {
			u = u.Add(c.Usage)
		}
	}
	return u
}

// Results calls fn for every recorded result in order.
func (rec *Recording) eachResult(fn func(t, c int, r *Result)) {
	for ti, t := range rec.Turns {
		for ci, c := range t.Calls {
			for _, r := range c.Results {
				fn(ti, ci, r)
			}
		}
	}
}

// addResult adds r to c's results, named by the tool of the call it
// answers, in the order of c's tool calls (sortResults).
func (c *Call) addResult(r *Result) {
	for _, tc := range c.Assistant.ToolCalls {
		if tc.ID == r.CallID {
			r.Tool = tc.Name
		}
	}
	c.Results = append(c.Results, r)
	c.sortResults()
}

// textResult is the result of call id whose output is text alone (none
// when text is empty), found at byte off.
func textResult(id, text string, isErr bool, off int64) *Result {
	r := &Result{CallID: id, Shown: text, IsError: isErr, Offset: off}
	if text != "" {
		r.Full = []harness.Part{harness.TextPart(text)}
	}
	return r
}

// sortResults puts c's results in the order of its tool calls: the
// importers pair results with calls as they come, in any order.
func (c *Call) sortResults() {
	order := map[string]int{}
	for i, tc := range c.Assistant.ToolCalls {
		order[tc.ID] = i
	}
	rs := c.Results
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && order[rs[j].CallID] < order[rs[j-1].CallID]; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}
