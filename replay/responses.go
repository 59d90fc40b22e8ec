package replay

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// formatResponses names a list of OpenAI Responses API input items:
// messages, function_call and function_call_output items, reasoning (what
// a Responses request's "input" holds, and what loops built on the
// Responses API, such as the OpenAI Agents SDK's, keep of a run).
const formatResponses = "openai-responses"

// responsesOnly are the item types only a Responses input list has (a
// message item reads as a chat message too).
var responsesOnly = map[string]bool{
	"function_call": true, "function_call_output": true, "custom_tool_call": true, "custom_tool_call_output": true,
	"local_shell_call": true, "local_shell_call_output": true, "reasoning": true, "web_search_call": true,
}

// responsesItems reports whether elems are Responses API input items: one
// of them has a type only such a list has.
func responsesItems(elems []rawValue) bool {
	for _, v := range elems {
		var it struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(v.raw, &it) == nil && responsesOnly[it.Type] {
			return true
		}
	}
	return false
}

// parseResponses imports a list of Responses API input items, as a Codex
// rollout's response items are read (cxBuilder: a user message is a
// turn's prompt, the items of one response one Call, outputs paired by
// call_id); a message with a role and no type is a message item, and the
// system and developer messages before the first response are the system
// prompt. req holds what a request body beside the items said (system,
// tools, warnings).
func parseResponses(src *source, elems []rawValue, paths []string, req *Recording, partial bool) (*Recording, error) {
	b := &cxBuilder{format: formatResponses, system: req.System}
	b.start()
	for i, v := range elems {
		var it cxItem
		if err := src.decodeAt(v, paths[i], &it); err != nil {
			return nil, err
		}
		if it.Type == "" && it.Role != "" {
			it.Type = "message"
		}
		if sys, err := b.systemItem(src, v.off, paths[i], &it); sys || err != nil {
			if err != nil {
				return nil, err
			}
			continue
		}
		if err := b.addItem(src, v.off, paths[i], &it); err != nil {
			return nil, err
		}
	}
	b.fold.end(b.rec)
	rec := b.rec
	if rec.Calls() == 0 {
		return nil, src.errAt(0, "", "no response item from the model", ErrNoModelCall)
	}
	rec.ID = strings.TrimSuffix(filepath.Base(src.name), filepath.Ext(src.name))
	rec.Source, rec.System, rec.Tools, rec.Model = src.name, b.system, req.Tools, req.Model
	rec.Warnings = append(req.Warnings, b.warnings(0, 1, partial)...)
	return rec, nil
}

// systemItem adds message item it (found at off) to the system prompt when
// it is a system or developer message before the first response, and
// reports whether it was.
func (b *cxBuilder) systemItem(src *source, off int64, path string, it *cxItem) (bool, error) {
	if it.Type != "message" || (it.Role != "system" && it.Role != "developer") || b.rec.Calls() > 0 {
		return false, nil
	}
	text, _, err := chatContent(it.Content)
	if err != nil {
		return true, src.errAt(off, path+".content", err.Error(), nil)
	}
	b.system = strings.TrimPrefix(b.system+"\n\n"+text, "\n\n")
	return true, nil
}
