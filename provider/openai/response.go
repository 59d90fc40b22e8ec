package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"

	"github.com/agentharness/harness"
)

// fromCompletion maps a non-streamed reply. Only the first choice is used
// (harness never asks for more).
func fromCompletion(cc *openai.ChatCompletion) (*harness.Response, error) {
	if cc == nil || len(cc.Choices) == 0 {
		return nil, errors.New("openai: the response has no choices")
	}
	ch := cc.Choices[0]
	if ch.FinishReason == "" && ch.Message.Content == "" && ch.Message.Refusal == "" && len(ch.Message.ToolCalls) == 0 {
		return nil, fmt.Errorf("openai: %w: an empty choice (no content, no tool calls, no finish_reason)", harness.ErrInvalidResponse)
	}
	text := ch.Message.Content
	if text == "" {
		text = ch.Message.Refusal
	}
	var calls []harness.ToolCall
	for _, tc := range ch.Message.ToolCalls {
		switch tc.Type {
		case "function", "":
			calls = append(calls, harness.ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: json.RawMessage(tc.Function.Arguments)})
		case "custom":
			calls = append(calls, harness.ToolCall{ID: tc.ID, Name: tc.Custom.Name, Args: json.RawMessage(tc.Custom.Input)})
		}
	}
	u, err := usage(cc.Usage)
	if err != nil {
		return nil, err
	}
	return buildResponse(text, calls, ch.FinishReason, cc.Model, u), nil
}

func buildResponse(text string, calls []harness.ToolCall, finish, model string, u harness.Usage) *harness.Response {
	msg := harness.Message{Role: harness.RoleAssistant, ToolCalls: calls}
	if text != "" {
		msg.Parts = []harness.Part{harness.TextPart(text)}
	}
	return &harness.Response{Message: msg, Usage: u, StopReason: finish, Model: model}
}

// usage maps the reported counts: prompt_tokens already includes the
// cached tokens, which is what harness.Usage.Input means. Impossible counts
// (see harness.Usage.Validate) are an error.
func usage(u openai.CompletionUsage) (harness.Usage, error) {
	out := harness.Usage{
		Input:      int(u.PromptTokens),
		Cached:     int(u.PromptTokensDetails.CachedTokens),
		CacheWrite: int(u.PromptTokensDetails.CacheWriteTokens),
		Output:     int(u.CompletionTokens),
	}
	if err := out.Validate(); err != nil {
		return harness.Usage{}, fmt.Errorf("openai: %w", err)
	}
	return out, nil
}

// accumulator rebuilds a streamed reply from its chunks.
type accumulator struct {
	text   strings.Builder
	calls  []*harness.ToolCall
	args   []*strings.Builder
	byIdx  map[int64]int
	finish string
	model  string
	usage  harness.Usage
	err    error // the first impossible usage seen
}

// add folds a chunk in and returns the text it carries.
func (a *accumulator) add(ch openai.ChatCompletionChunk) string {
	if ch.Model != "" {
		a.model = ch.Model
	}
	if ch.JSON.Usage.Valid() {
		u, err := usage(ch.Usage)
		if err != nil && a.err == nil {
			a.err = err
		}
		a.usage = u
	}
	var out strings.Builder
	for _, c := range ch.Choices {
		if c.Index != 0 {
			continue
		}
		d := c.Delta
		out.WriteString(d.Content)
		out.WriteString(d.Refusal)
		for _, tc := range d.ToolCalls {
			a.addCall(tc)
		}
		if c.FinishReason != "" {
			a.finish = c.FinishReason
		}
	}
	a.text.WriteString(out.String())
	return out.String()
}

// addCall folds a tool-call delta in. Deltas are matched by index; a new id
// at a known index starts a new call, for servers that send every call
// whole at index 0.
func (a *accumulator) addCall(tc openai.ChatCompletionChunkChoiceDeltaToolCall) {
	if a.byIdx == nil {
		a.byIdx = map[int64]int{}
	}
	i, ok := a.byIdx[tc.Index]
	if ok && tc.ID != "" && a.calls[i].ID != "" && a.calls[i].ID != tc.ID {
		ok = false
	}
	if !ok {
		a.calls = append(a.calls, &harness.ToolCall{})
		a.args = append(a.args, &strings.Builder{})
		i = len(a.calls) - 1
		a.byIdx[tc.Index] = i
	}
	if tc.ID != "" {
		a.calls[i].ID = tc.ID
	}
	if a.calls[i].Name == "" {
		// The name comes whole in the first delta; some servers repeat it.
		a.calls[i].Name = tc.Function.Name
	}
	a.args[i].WriteString(tc.Function.Arguments)
}

// finished reports whether the stream reached a finish_reason.
func (a *accumulator) finished() bool { return a.finish != "" }

// response returns the reply the chunks built, or the first impossible
// usage they carried.
func (a *accumulator) response() (*harness.Response, error) {
	if a.err != nil {
		return nil, a.err
	}
	var calls []harness.ToolCall
	for i, c := range a.calls {
		c.Args = json.RawMessage(a.args[i].String())
		calls = append(calls, *c)
	}
	return buildResponse(a.text.String(), calls, a.finish, a.model, a.usage), nil
}
