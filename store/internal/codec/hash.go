package codec

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"

	"github.com/agentharness/harness/internal/toolschema"

	"github.com/agentharness/harness"
)

// Request is what a request the agent is about to send offers, ready to
// store: the system prompt and the tool schemas, each with its content
// hash, so that a store keeps each distinct one once.
type Request struct {
	System, SystemHash string
	// Specs are copies of the schemas sent, Hashes their content hashes
	// and Bytes their sizes as sent; SetHash names the list ("" for none)
	// and SetBytes sums Bytes.
	Specs    []harness.ToolSpec
	Hashes   []string
	Bytes    []int
	SetHash  string
	SetBytes int
}

// NewRequest copies what req offers (the agent shares req's slices with
// its view) and hashes it.
func NewRequest(req *harness.Request) *Request {
	p := &Request{System: req.System}
	if req.System != "" {
		p.SystemHash = PromptHash(req.System)
	}
	if len(req.Tools) == 0 {
		return p
	}
	p.Specs = make([]harness.ToolSpec, len(req.Tools))
	p.Hashes = make([]string, len(req.Tools))
	p.Bytes = make([]int, len(req.Tools))
	for i, t := range req.Tools {
		if t.InputSchema != nil {
			t.InputSchema = append(json.RawMessage(nil), t.InputSchema...)
		}
		p.Specs[i], p.Hashes[i], p.Bytes[i] = t, SchemaHash(t), toolschema.Bytes(t.Name, t.Description, t.InputSchema)
		p.SetBytes += p.Bytes[i]
	}
	p.SetHash = SetHash(p.Hashes)
	return p
}

// RequestOf is what req offers for its round of turn, copied and hashed
// (NewRequest). A conversation without an id, or a missing turn or
// request, is an error.
func RequestOf(conv *harness.Conversation, turn *harness.Turn, req *harness.Request) (*Request, error) {
	switch {
	case conv == nil || conv.ID == "":
		return nil, errors.New("the conversation has no id")
	case turn == nil || req == nil:
		return nil, errors.New("AddRequest needs a turn and a request")
	}
	return NewRequest(req), nil
}

// Hash domains keep the three kinds of content hash apart.
const (
	schemaDomain = "harness.toolspec.v1\x00"
	setDomain    = "harness.toolset.v1\x00"
	promptDomain = "harness.system.v1\x00"
)

// SchemaKey is what a schema's hash is taken of: every field that makes
// two schemas different (the risk too: it decides parallelism and
// approval), each length-prefixed so that no two schemas share a key.
func SchemaKey(spec harness.ToolSpec) []byte {
	b := make([]byte, 0, len(schemaDomain)+len(spec.Name)+len(spec.Description)+len(spec.InputSchema)+3*binary.MaxVarintLen64+1)
	b = append(b, schemaDomain...)
	b = binary.AppendUvarint(b, uint64(len(spec.Name)))
	b = append(b, spec.Name...)
	b = binary.AppendUvarint(b, uint64(len(spec.Description)))
	b = append(b, spec.Description...)
	b = binary.AppendUvarint(b, uint64(len(spec.InputSchema)))
	b = append(b, spec.InputSchema...)
	return append(b, byte(spec.Risk))
}

// SchemaHash is the content hash of a tool schema (hex SHA-256 of SchemaKey).
func SchemaHash(spec harness.ToolSpec) string {
	sum := sha256.Sum256(SchemaKey(spec))
	return hex.EncodeToString(sum[:])
}

// SetHash names an ordered list of schemas by their hashes (all of one
// length, so plain concatenation is unambiguous).
func SetHash(hashes []string) string {
	h := sha256.New()
	h.Write([]byte(setDomain))
	for _, x := range hashes {
		h.Write([]byte(x))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// PromptHash is the content hash of a system prompt.
func PromptHash(text string) string {
	sum := sha256.Sum256([]byte(promptDomain + text))
	return hex.EncodeToString(sum[:])
}

// Short abbreviates a content hash for messages.
func Short(h string) string { return h[:min(len(h), 12)] }

// RequestGarbage returns the statements (the same in SQLite and PostgreSQL)
// that remove the system prompts, tool lists and schemas no stored round
// refers to any more, in order: members before their lists, lists before
// the schemas they held. Prompts and lists are shared between
// conversations, so only those nothing uses go. requests, when not "", is
// a table that also refers to them (columns system and tool_set): a store
// that keeps each round's request in a row of its own.
func RequestGarbage(requests string) []string {
	unused := func(col, hash string) string {
		q := `NOT EXISTS (SELECT 1 FROM rounds r WHERE r.req_` + col + ` = ` + hash + `)`
		if requests != "" {
			q += ` AND NOT EXISTS (SELECT 1 FROM ` + requests + ` q WHERE q.` + col + ` = ` + hash + `)`
		}
		return q
	}
	return []string{
		`DELETE FROM tool_set_members WHERE set_hash IN (SELECT hash FROM tool_sets t WHERE ` + unused("tool_set", "t.hash") + `)`,
		`DELETE FROM tool_sets WHERE ` + unused("tool_set", "tool_sets.hash"),
		`DELETE FROM tool_schemas WHERE NOT EXISTS (SELECT 1 FROM tool_set_members m WHERE m.schema_hash = tool_schemas.hash)`,
		`DELETE FROM system_prompts WHERE ` + unused("system", "system_prompts.hash"),
	}
}
