package recall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// Name is the tool's name, which compaction placeholders refer to.
const Name = "recall"

// LookupFunc finds the stored result of callID in conversation convID. It
// returns (nil, nil), or an error wrapping store.ErrNotFound, when there
// is none. A transcript store's FullResult (store/sqlite) fits it.
type LookupFunc func(ctx context.Context, convID, callID string) (*harness.ToolResult, error)

// Options configure the tool. Nil means defaults.
type Options struct {
	// Lookup is asked for results the in-memory transcript does not hold
	// (a conversation resumed from a store without its payloads). Nil
	// searches the transcript only.
	Lookup LookupFunc
}

// spec is the tool's schema, shared by every instance.
var spec = harness.ToolSpec{
	Name: Name,
	Description: "Return the full stored result of an earlier tool call by its call id. " +
		"Use it when a result in the conversation was cleared to save context and its placeholder names the call id. " +
		"offset and limit (in characters) page through a long result.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{` +
		`"call_id":{"type":"string","description":"the id of the earlier call"},` +
		`"offset":{"type":"integer","minimum":0,"description":"first character to return (default 0)"},` +
		`"limit":{"type":"integer","minimum":0,"description":"most characters to return (default: all)"}},` +
		`"required":["call_id"],"additionalProperties":false}`),
	Risk: harness.ReadOnly,
}

// Spec returns the tool's schema.
func Spec() harness.ToolSpec { return spec }

// New returns the recall tool; nil options mean defaults.
func New(opts *Options) harness.Tool {
	var o Options
	if opts != nil {
		o = *opts
	}
	return harness.Tool{Spec: spec, Func: o.run}
}

type args struct {
	CallID string `json:"call_id"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

func (o Options) run(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
	var a args
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return harness.ErrorResult("recall: the arguments are not a JSON object with call_id: %v", err), nil
	}
	if a.CallID == "" {
		return harness.ErrorResult("recall: call_id is required: pass the call id a cleared result's placeholder names"), nil
	}
	if a.Offset < 0 || a.Limit < 0 {
		return harness.ErrorResult("recall: offset and limit must not be negative"), nil
	}
	info, _ := harness.CallInfoFrom(ctx)
	var found *harness.ToolResult
	if info.Transcript != nil {
		found = info.Transcript.FindResult(a.CallID)
	}
	// A result loaded from a store without its payload (Partial) holds
	// only the model's copy: the full one is the store's.
	partial := store.Partial(found)
	if (found == nil || partial) && o.Lookup != nil {
		r, err := o.Lookup(ctx, info.Conversation, a.CallID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			r = nil
		case err != nil:
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return nil, err
			}
			return harness.ErrorResult("recall: could not read the stored result of %q: %v", a.CallID, err), nil
		}
		found = r
		partial = store.Partial(r)
	}
	if partial {
		return harness.ErrorResult("recall: the full result of %q is in the transcript store but was not loaded, and this agent has no store lookup for recall", a.CallID), nil
	}
	if found == nil {
		return harness.ErrorResult("recall: no stored result has call id %q in this conversation; use the exact id from the placeholder", a.CallID), nil
	}

	meta := map[string]any{"call_id": found.CallID, "tool": found.Tool, "bytes": found.PayloadSize()}
	if found.IsError {
		meta["was_error"] = true
	}
	if a.Offset == 0 && a.Limit == 0 {
		parts := append([]harness.Part(nil), found.FullParts()...)
		if found.IsError {
			parts = append([]harness.Part{harness.TextPart("(the recalled call had failed; its error result follows)")}, parts...)
		}
		return &harness.ToolResult{Parts: parts, Meta: meta}, nil
	}

	// Paging works on characters of the text form, so a page never splits
	// a character.
	text := []rune(found.FullText())
	total := len(text)
	start := min(a.Offset, total)
	end := total
	if a.Limit > 0 {
		end = start + min(a.Limit, total-start) // start+Limit may overflow
	}
	page := string(text[start:end])
	if end < total {
		page += fmt.Sprintf("\n… (characters %d–%d of %d; call %s with offset=%d for more)", start, end, total, Name, end)
	} else if start > 0 || end < total {
		page += fmt.Sprintf("\n… (characters %d–%d of %d: the end of the result)", start, end, total)
	}
	meta["offset"], meta["returned_chars"], meta["total_chars"] = start, end-start, total
	return &harness.ToolResult{Parts: []harness.Part{harness.TextPart(page)}, Meta: meta}, nil
}
