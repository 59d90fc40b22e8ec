package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Risk describes what a tool may do to the world. It is a set of flags:
// Network is independent of read/write, so a web fetch is ReadOnly|Network.
type Risk uint8

// The risk flags. A tool with no flags is treated as Destructive.
const (
	// ReadOnly tools do not modify anything; consecutive read-only calls of
	// one round run in parallel.
	ReadOnly Risk = 1 << iota
	// Idempotent tools may modify the world, but repeating a call with the
	// same arguments has no further effect.
	Idempotent
	// Destructive tools may modify or delete things.
	Destructive
	// Network tools reach outside the machine; their answers may change
	// between two identical calls.
	Network
)

// Has reports whether every flag of f is set in r.
func (r Risk) Has(f Risk) bool { return r&f == f && f != 0 }

// IsReadOnly reports whether a call cannot modify anything: ReadOnly is set
// and neither Destructive nor Idempotent is.
func (r Risk) IsReadOnly() bool { return r.Has(ReadOnly) && r&(Destructive|Idempotent) == 0 }

// String returns the flags joined with "|", for example "read-only|network".
func (r Risk) String() string {
	if r == 0 {
		return "unspecified"
	}
	var names []string
	for _, f := range []struct {
		flag Risk
		name string
	}{{ReadOnly, "read-only"}, {Idempotent, "idempotent"}, {Destructive, "destructive"}, {Network, "network"}} {
		if r.Has(f.flag) {
			names = append(names, f.name)
		}
	}
	return strings.Join(names, "|")
}

// ToolSpec is what the model is told about a tool.
type ToolSpec struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// InputSchema is the JSON Schema of the arguments object. Empty means
	// any object.
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// Risk is not sent to the model; it decides parallelism, dedupe and
	// approval.
	Risk Risk `json:"-"`
}

// ToolCall is one call the model asked for.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Args is the arguments object exactly as the model sent it; it may be
	// invalid JSON, which the agent reports back to the model.
	Args json.RawMessage `json:"args"`
}

// ToolFunc runs one call. A tool reports its own failures as a result with
// IsError set; a returned error is turned into such a result by the agent.
type ToolFunc func(ctx context.Context, call *ToolCall) (*ToolResult, error)

// Guard wraps a ToolFunc with a policy, in the style of net/http
// middleware: it may inspect the call, call next (or not), and rewrite the
// model's copy of the result.
type Guard func(next ToolFunc) ToolFunc

// Chain wraps fn in guards; guards[0] is the outermost and sees the call
// first and the result last.
func Chain(fn ToolFunc, guards ...Guard) ToolFunc {
	for i := len(guards) - 1; i >= 0; i-- {
		if guards[i] != nil {
			fn = guards[i](fn)
		}
	}
	return fn
}

// Tool is a callable tool: its spec and its function.
type Tool struct {
	Spec ToolSpec
	Func ToolFunc
}

// CutKind names what a guard or policy did to the model's copy of a result.
type CutKind string

// The kinds of cut.
const (
	CutSpilled   CutKind = "spilled"   // over the ceiling; the full payload was saved to a spill file (for a streamed result, the spill file is the only full record)
	CutTruncated CutKind = "truncated" // over the ceiling; the rest is kept in the transcript only
	CutDeduped   CutKind = "deduped"   // an exact repeat of an earlier call; payload replaced by a pointer
	CutTrimmed   CutKind = "trimmed"   // trimmed to fit a turn's evidence budget (view only)
	CutCleared   CutKind = "cleared"   // cleared by compaction (view only)
)

// Cut records one reduction of a result's model copy: what was done, the
// sizes before and after, and where the rest can be fetched.
type Cut struct {
	Kind CutKind `json:"kind"`
	// By names the guard or policy that made the cut.
	By string `json:"by,omitempty"`
	// BytesIn and BytesOut are the sizes before and after the cut, measured
	// as the model would be sent them.
	BytesIn  int `json:"bytes_in"`
	BytesOut int `json:"bytes_out"`
	// Locator is where the full payload can be read back: a spill path
	// relative to the workspace, or "call:<id>" for the transcript.
	Locator string `json:"locator,omitempty"`
	// Of names the earlier call a deduped result repeats (the first, when
	// it repeats several).
	Of string `json:"of,omitempty"`
	// Refs lists every earlier call whose result the model copy points at
	// instead of repeating it, in order of first reference (Of is the
	// first). The model reads those lines only while it still sees them
	// there, so a policy that clears old results must keep them, or clear
	// the result that points at them too.
	Refs []string `json:"refs,omitempty"`
}

// ToolResult is what a call returned. Parts, Structured and IsError are the
// full payload and are stored as they are; Model is the copy the model is
// shown after the per-call guards (nil means the full payload).
type ToolResult struct {
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	// Parts is the full content the tool returned.
	Parts []Part `json:"parts,omitempty"`
	// Structured is structured content (MCP's structuredContent) when the
	// tool returned it beside Parts.
	Structured json.RawMessage `json:"structured,omitempty"`
	IsError    bool            `json:"is_error,omitempty"`
	// Model is the model's copy; nil means "the same as the full payload".
	Model []Part `json:"model,omitempty"`
	// Cuts lists what the guards did to the model's copy, outermost last.
	Cuts []Cut `json:"cuts,omitempty"`
	// Bytes is the size of the full payload as the model would be sent it
	// (see PayloadSize); the agent fills it in when a guard has not.
	Bytes int `json:"bytes"`
	// TimedOut is set when the call was stopped by the agent's tool timeout.
	TimedOut bool `json:"timed_out,omitempty"`
	// Meta holds tool-specific facts (exit code, total lines) for logs.
	Meta map[string]any `json:"meta,omitempty"`
	// Partial is set on a result loaded from a store without its full
	// payload (stores load cut results lazily: views need only the model
	// copy). Parts and Structured are then nil; the store's FullResult
	// fetches them.
	Partial bool `json:"-"`

	// Stream, when set, carries text the tool is still producing. A guard
	// that bounds size consumes it (keeping memory bounded); otherwise the
	// agent drains it into a text part. Stream is never stored.
	Stream io.ReadCloser `json:"-"`
}

// TextResult returns a successful result with one text part.
func TextResult(text string) *ToolResult {
	return &ToolResult{Parts: []Part{TextPart(text)}}
}

// ErrorResult returns an IsError result whose text tells the model what
// went wrong and, ideally, what to do instead.
func ErrorResult(format string, args ...any) *ToolResult {
	return &ToolResult{Parts: []Part{TextPart(fmt.Sprintf(format, args...))}, IsError: true}
}

// ModelParts returns the parts the model is shown: the guards' copy, or
// the full payload (with Structured added when no part already carries it).
func (r *ToolResult) ModelParts() []Part {
	if r.Model != nil {
		return r.Model
	}
	return r.FullParts()
}

// FullParts returns the full payload as parts: Parts, plus Structured as a
// JSON part unless a part already carries the same payload (MCP tools often
// send one payload both as text and as structured content; it counts once).
func (r *ToolResult) FullParts() []Part {
	if len(r.Structured) == 0 || structuredDuplicated(r.Parts, r.Structured) {
		return r.Parts
	}
	out := make([]Part, 0, len(r.Parts)+1)
	out = append(out, r.Parts...)
	return append(out, JSONPart(r.Structured))
}

// ModelText is the text the model is shown of this result.
func (r *ToolResult) ModelText() string { return partsText(r.ModelParts()) }

// FullText is the text of the full payload.
func (r *ToolResult) FullText() string { return partsText(r.FullParts()) }

// PayloadSize is the size of the full payload as the model would be sent
// it: text parts, JSON parts and structured content serialized, each
// payload counted once; images count their raw bytes.
func (r *ToolResult) PayloadSize() int {
	n := 0
	for _, p := range r.FullParts() {
		n += p.Size()
	}
	return n
}

// structuredDuplicated reports whether some text or JSON part already holds
// the structured payload (compared as JSON values, so whitespace and key
// order do not matter).
func structuredDuplicated(parts []Part, structured json.RawMessage) bool {
	var want any
	if json.Unmarshal(structured, &want) != nil {
		return false
	}
	for _, p := range parts {
		var raw []byte
		switch p.Type {
		case PartText:
			raw = []byte(p.Text)
		case PartJSON:
			raw = p.JSON
		default:
			continue
		}
		if len(raw) < len(structured)/2 {
			continue
		}
		var got any
		if json.Unmarshal(raw, &got) == nil && jsonEqual(got, want) {
			return true
		}
	}
	return false
}

func jsonEqual(a, b any) bool {
	ab, err1 := json.Marshal(a)
	bb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ab) == string(bb)
}
