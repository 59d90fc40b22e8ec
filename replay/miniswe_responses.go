package replay

import (
	"encoding/json"
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wire/openai"
)

// miniSWEItem is a message of a mini-swe-agent trajectory run on the
// Responses API: a whole response ({"object": "response", "output": […],
// "usage", "model"}), a function_call_output or message item, or a chat
// message ({"role", "content"}), each with mini-swe-agent's "extra".
type miniSWEItem struct {
	cxItem
	Object string                 `json:"object"`
	Usage  *openai.ResponsesUsage `json:"usage"`
	Extra  *struct {
		chatExtra
		Response *miniSWEResponse `json:"response"`
	} `json:"extra"`
}

// miniSWEResponse is a response a format error quotes.
type miniSWEResponse struct {
	Object string                 `json:"object"`
	Model  string                 `json:"model"`
	Output json.RawMessage        `json:"output"`
	Usage  *openai.ResponsesUsage `json:"usage"`
}

// miniSWEResponses reports whether a trajectory's messages are those of
// mini-swe-agent's Responses API models: one of them is a response object
// or an item only a Responses list has.
func miniSWEResponses(elems []rawValue) bool {
	for _, v := range elems {
		var it struct {
			Object string `json:"object"`
			Type   string `json:"type"`
		}
		if json.Unmarshal(v.raw, &it) == nil && (it.Object == "response" || responsesOnly[it.Type]) {
			return true
		}
	}
	return false
}

// parseMiniSWEResponses reads the messages of a mini-swe-agent trajectory
// run on the Responses API, as a Responses input list is read (cxBuilder):
// each response object is one model call with its output items and usage,
// each function_call_output the result of its call, with the command's
// whole output from extra.raw_output; a format error's quoted response is
// the call it answers. The system messages before the first response are
// the system prompt.
func parseMiniSWEResponses(src *source, elems []rawValue) (*Recording, int, error) {
	b := &cxBuilder{format: formatMiniSWE}
	b.start()
	for i, v := range elems {
		path := fmt.Sprintf("messages[%d]", i)
		var it miniSWEItem
		if err := src.decodeAt(v, path, &it); err != nil {
			return nil, 0, err
		}
		if it.Role == "exit" {
			continue // the submission, never sent to a model
		}
		if it.Extra != nil && it.Extra.Response != nil && it.Extra.Response.Object == "response" {
			r := it.Extra.Response
			if err := b.miniSWEResponse(src, v.off, path+".extra.response", r.Output, r.Usage, r.Model); err != nil {
				return nil, 0, err
			}
		}
		if err := b.miniSWEItem(src, v.off, path, &it); err != nil {
			return nil, 0, err
		}
	}
	b.fold.end(b.rec)
	rec := b.rec
	rec.System = b.system
	return rec, b.reasoning, nil
}

// miniSWEItem reads one message of a Responses trajectory (see
// parseMiniSWEResponses).
func (b *cxBuilder) miniSWEItem(src *source, off int64, path string, it *miniSWEItem) error {
	if it.Object == "response" {
		return b.miniSWEResponse(src, off, path, it.Output, it.Usage, it.Model)
	}
	if it.Type == "" && it.Role != "" {
		it.Type = "message"
	}
	if sys, err := b.systemItem(src, off, path, &it.cxItem); sys || err != nil {
		return err
	}
	c := b.pending[it.CallID]
	if err := b.addItem(src, off, path, &it.cxItem); err != nil {
		return err
	}
	if it.Type != "function_call_output" || c == nil || it.Extra == nil {
		return nil
	}
	for _, r := range c.Results {
		if r.CallID == it.CallID {
			if it.Extra.RawOutput != nil {
				r.Full = []harness.Part{harness.TextPart(miniSWEFull(r.Shown, *it.Extra.RawOutput))}
			}
			r.IsError = it.Extra.ExceptionInfo != ""
		}
	}
	return nil
}

// miniSWEResponse adds a response (its output items, usage and model,
// found at off) as one model call.
func (b *cxBuilder) miniSWEResponse(src *source, off int64, path string, output json.RawMessage, usage *openai.ResponsesUsage, model string) error {
	b.call = nil
	c := b.response(off)
	var items []cxItem
	if len(output) > 0 && string(output) != "null" {
		if err := json.Unmarshal(output, &items); err != nil {
			return src.errAt(off, path+".output", "not a list of output items: "+err.Error(), nil)
		}
	}
	for i := range items {
		if err := b.addItem(src, off, fmt.Sprintf("%s.output[%d]", path, i), &items[i]); err != nil {
			return err
		}
	}
	if usage != nil {
		c.Usage, c.HasUsage = usage.Usage(), true
		b.usage = true
	}
	if b.rec.Model == "" {
		b.rec.Model = model
	}
	b.call = nil
	return nil
}
