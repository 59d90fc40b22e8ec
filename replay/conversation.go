package replay

import (
	"fmt"

	"github.com/agentharness/harness"
)

// parseConversation imports harness's own transcript: the JSON of a
// [harness.Conversation] (every turn, its context messages, round, full result
// and the model's copy of it). The full result is ToolResult.Parts (and
// Structured); what was shown is the stored model copy.
func parseConversation(name string, data []byte) (*Recording, error) {
	src := &source{name: name, data: data}
	fields, err := src.objectFields(0, data, "")
	if err != nil {
		return nil, err
	}
	turnsV, ok := fields["turns"]
	if !ok {
		return nil, src.errAt(0, "", `not a harness conversation: no "turns" field`, nil)
	}
	rec := &Recording{Source: name, Format: formatConversation}
	if id, ok := fields["id"]; ok {
		if err := src.decodeAt(id, "id", &rec.ID); err != nil {
			return nil, err
		}
	}
	turns, err := src.arrayElems(turnsV.off, turnsV.raw, "turns")
	if err != nil {
		return nil, err
	}
	request := 0
	for i, tv := range turns {
		path := fmt.Sprintf("turns[%d]", i)
		tf, err := src.objectFields(tv.off, tv.raw, path)
		if err != nil {
			return nil, err
		}
		t := &Turn{}
		if in, ok := tf["input"]; ok {
			if err := src.decodeAt(in, path+".input", &t.Input); err != nil {
				return nil, err
			}
		}
		if cv, ok := tf["context"]; ok {
			if err := src.decodeAt(cv, path+".context", &t.Context); err != nil {
				return nil, err
			}
		}
		request += 1 + len(t.Context) // the user input and its context messages
		rec.Turns = append(rec.Turns, t)
		rv, ok := tf["rounds"]
		if !ok || string(rv.raw) == "null" {
			continue
		}
		rounds, err := src.arrayElems(rv.off, rv.raw, path+".rounds")
		if err != nil {
			return nil, err
		}
		for j, v := range rounds {
			rpath := fmt.Sprintf("%s.rounds[%d]", path, j)
			var r harness.Round
			if err := src.decodeAt(v, rpath, &r); err != nil {
				return nil, err
			}
			c := &Call{Request: request, Offset: v.off, Assistant: r.Assistant, Usage: r.Usage, Final: r.Final}
			c.Assistant.Role = harness.RoleAssistant
			c.HasUsage = r.Usage != (harness.Usage{})
			request++
			ids := map[string]bool{}
			for _, tc := range r.Assistant.ToolCalls {
				ids[tc.ID] = true
			}
			for k, res := range r.Results {
				if res == nil {
					return nil, src.errAt(v.off, fmt.Sprintf("%s.results[%d]", rpath, k), "null result", nil)
				}
				if !ids[res.CallID] {
					return nil, src.errAt(v.off, fmt.Sprintf("%s.results[%d].call_id", rpath, k), fmt.Sprintf("result for %q, which the round's assistant message did not call", res.CallID), nil)
				}
				delete(ids, res.CallID)
				c.Results = append(c.Results, &Result{
					CallID: res.CallID, Tool: res.Tool, Full: res.Parts, Structured: res.Structured,
					Shown: res.ModelText(), IsError: res.IsError, Offset: v.off,
				})
				request++
			}
			t.Calls = append(t.Calls, c)
		}
	}
	if rec.ID == "" {
		rec.ID = name
	}
	return rec, nil
}
