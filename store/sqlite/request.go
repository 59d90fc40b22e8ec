package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// requestKey names the round a request will produce.
type requestKey struct {
	conv        string
	turn, round int
}

// pendingRequest is a request the agent is about to send, kept in memory
// until its round is stored: the round row does not exist before the model
// answers, and writing both in the round's transaction keeps a run at one
// transaction per round.
type pendingRequest struct {
	system, systemHash string
	// specs are copies of the schemas sent, hashes their content hashes
	// and bytes their sizes as sent; setHash names the list.
	specs    []harness.ToolSpec
	hashes   []string
	bytes    []int
	setHash  string
	setBytes int
}

// AddRequest keeps what a request offers (its system prompt and the tool
// schemas it sends) until AddRound stores the round it produced, in the
// same transaction. A retried request replaces the one before it; the
// requests of a turn whose model call failed are dropped at EndTurn.
func (s *Store) AddRequest(ctx context.Context, conv *harness.Conversation, turn *harness.Turn, req *harness.Request) error {
	switch {
	case conv == nil || conv.ID == "":
		return errors.New("sqlite store: the conversation has no id")
	case turn == nil || req == nil:
		return errors.New("sqlite store: AddRequest needs a turn and a request")
	}
	p := newPendingRequest(req)
	s.rmu.Lock()
	defer s.rmu.Unlock()
	if s.requests == nil {
		s.requests = map[requestKey]*pendingRequest{}
	}
	s.requests[requestKey{conv.ID, turn.Index, req.Round}] = p
	return nil
}

func newPendingRequest(req *harness.Request) *pendingRequest {
	p := &pendingRequest{system: req.System}
	if req.System != "" {
		p.systemHash = promptHash(req.System)
	}
	if len(req.Tools) == 0 {
		return p
	}
	p.specs = make([]harness.ToolSpec, len(req.Tools))
	p.hashes = make([]string, len(req.Tools))
	p.bytes = make([]int, len(req.Tools))
	for i, t := range req.Tools {
		if t.InputSchema != nil {
			t.InputSchema = append(json.RawMessage(nil), t.InputSchema...)
		}
		p.specs[i], p.hashes[i], p.bytes[i] = t, schemaHash(t), harness.SchemaBytes(t)
		p.setBytes += p.bytes[i]
	}
	p.setHash = setHash(p.hashes)
	return p
}

// takeRequest removes and returns the pending request of a round, or nil.
func (s *Store) takeRequest(conv string, turn, round int) *pendingRequest {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	k := requestKey{conv, turn, round}
	p := s.requests[k]
	delete(s.requests, k)
	return p
}

// dropRequests forgets the pending requests of a turn (a model call that
// failed leaves one behind).
func (s *Store) dropRequests(conv string, turn int) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	for k := range s.requests {
		if k.conv == conv && k.turn == turn {
			delete(s.requests, k)
		}
	}
}

// Hash domains keep the three kinds of content hash apart.
const (
	schemaDomain = "harness.toolspec.v1\x00"
	setDomain    = "harness.toolset.v1\x00"
	promptDomain = "harness.system.v1\x00"
)

// schemaKey is what a schema's hash is taken of: every field that makes
// two schemas different (the risk too: it decides parallelism and
// approval), each length-prefixed so that no two schemas share a key.
func schemaKey(spec harness.ToolSpec) []byte {
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

func schemaHash(spec harness.ToolSpec) string {
	sum := sha256.Sum256(schemaKey(spec))
	return hex.EncodeToString(sum[:])
}

// setHash names an ordered list of schemas by their hashes (all of one
// length, so plain concatenation is unambiguous).
func setHash(hashes []string) string {
	h := sha256.New()
	h.Write([]byte(setDomain))
	for _, x := range hashes {
		h.Write([]byte(x))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func promptHash(text string) string {
	sum := sha256.Sum256([]byte(promptDomain + text))
	return hex.EncodeToString(sum[:])
}

// writeRequest stores the system prompt and the tool list of a request,
// each only when the store does not hold it yet. The round row refers to
// them by hash.
func writeRequest(w *txw, p *pendingRequest) error {
	if p.systemHash != "" {
		if _, err := w.exec(`INSERT OR IGNORE INTO system_prompts (hash, text, bytes) VALUES (?, ?, ?)`,
			p.systemHash, p.system, len(p.system)); err != nil {
			return fmt.Errorf("system prompt: %w", err)
		}
	}
	if p.setHash == "" {
		return nil
	}
	res, err := w.exec(`INSERT OR IGNORE INTO tool_sets (hash, tools, bytes) VALUES (?, ?, ?)`, p.setHash, len(p.specs), p.setBytes)
	if err != nil {
		return fmt.Errorf("tool list: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("tool list: %w", err)
	} else if n == 0 {
		return nil // stored with its members by an earlier round
	}
	for i, t := range p.specs {
		var schema []byte
		if len(t.InputSchema) > 0 {
			schema = t.InputSchema
		}
		if _, err := w.exec(`INSERT OR IGNORE INTO tool_schemas (hash, name, description, input_schema, risk, bytes) VALUES (?, ?, ?, ?, ?, ?)`,
			p.hashes[i], t.Name, t.Description, schema, int(t.Risk), p.bytes[i]); err != nil {
			return fmt.Errorf("tool schema %q: %w", t.Name, err)
		}
		if _, err := w.exec(`INSERT INTO tool_set_members (set_hash, pos, schema_hash) VALUES (?, ?, ?)`, p.setHash, i+1, p.hashes[i]); err != nil {
			return fmt.Errorf("tool list: %w", err)
		}
	}
	return nil
}

// collectRequestGarbage removes the system prompts, tool lists and
// schemas no stored round refers to any more (after a deletion). They are
// shared between conversations, so only those nothing uses go.
func collectRequestGarbage(w *txw) error {
	for _, q := range []string{
		`DELETE FROM tool_set_members WHERE set_hash IN (SELECT hash FROM tool_sets t WHERE NOT EXISTS (SELECT 1 FROM rounds r WHERE r.req_tool_set = t.hash))`,
		`DELETE FROM tool_sets WHERE NOT EXISTS (SELECT 1 FROM rounds r WHERE r.req_tool_set = tool_sets.hash)`,
		`DELETE FROM tool_schemas WHERE NOT EXISTS (SELECT 1 FROM tool_set_members m WHERE m.schema_hash = tool_schemas.hash)`,
		`DELETE FROM system_prompts WHERE NOT EXISTS (SELECT 1 FROM rounds r WHERE r.req_system = system_prompts.hash)`,
	} {
		if _, err := w.exec(q); err != nil {
			return err
		}
	}
	return nil
}

// Requests returns what each stored round's request offered: the system
// prompt and the tool schemas sent, one entry per round in order (of turn
// only, when turn is not 0). Rounds that share a tool list share one
// slice of schemas, so a conversation offering the same 84 tools in every
// round loads them once. A round stored before request recording has
// Recorded false.
func (s *Store) Requests(ctx context.Context, convID string, turn int) ([]store.Request, error) {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	defer tx.Rollback()
	out, err := requestsTx(ctx, tx, convID, turn)
	if err != nil {
		return nil, fmt.Errorf("sqlite store: requests of %s: %w", convID, err)
	}
	return out, nil
}

func requestsTx(ctx context.Context, tx *sql.Tx, convID string, turn int) ([]store.Request, error) {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM conversations WHERE id = ?`, convID).Scan(&n); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("conversation %q: %w", convID, store.ErrNotFound)
	}
	var (
		out  []store.Request
		sets = map[string][]int{} // tool list hash → indexes in out
	)
	err := query(ctx, tx, `SELECT r.turn, r.idx, r.final, r.req_recorded, r.req_system, r.req_tool_set, p.text, p.bytes
FROM rounds r LEFT JOIN system_prompts p ON p.hash = r.req_system AND r.req_system != ''
WHERE r.conv_id = ? AND (? = 0 OR r.turn = ?) ORDER BY r.turn, r.idx`, []any{convID, turn, turn}, func(rows *sql.Rows) error {
		var (
			q              store.Request
			final, rec     int
			sysHash, toolH string
			text           sql.NullString
			bytes          sql.NullInt64
		)
		if err := rows.Scan(&q.Turn, &q.Round, &final, &rec, &sysHash, &toolH, &text, &bytes); err != nil {
			return err
		}
		q.Final, q.Recorded = final != 0, rec != 0
		q.System, q.SystemBytes, q.ToolSet = text.String, int(bytes.Int64), toolH
		if sysHash != "" && !text.Valid {
			return fmt.Errorf("turn %d round %d refers to system prompt %s, which the store does not hold", q.Turn, q.Round, short(sysHash))
		}
		if toolH != "" {
			sets[toolH] = append(sets[toolH], len(out))
		}
		out = append(out, q)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rounds: %w", err)
	}
	if len(sets) == 0 {
		return out, nil
	}
	type list struct {
		tools []harness.ToolSpec
		n     int // members the list was stored with
		bytes int
	}
	lists := map[string]*list{}
	err = query(ctx, tx, `SELECT t.hash, t.tools, t.bytes, m.pos, s.name, s.description, s.input_schema, s.risk
FROM tool_sets t JOIN tool_set_members m ON m.set_hash = t.hash JOIN tool_schemas s ON s.hash = m.schema_hash
WHERE t.hash IN (SELECT DISTINCT req_tool_set FROM rounds WHERE conv_id = ? AND (? = 0 OR turn = ?) AND req_tool_set != '')
ORDER BY t.hash, m.pos`, []any{convID, turn, turn}, func(rows *sql.Rows) error {
		var (
			h            string
			tools, bytes int
			pos          int
			spec         harness.ToolSpec
			schema       []byte
			risk         int64
		)
		if err := rows.Scan(&h, &tools, &bytes, &pos, &spec.Name, &spec.Description, &schema, &risk); err != nil {
			return err
		}
		if risk < 0 || risk > 0xff {
			return fmt.Errorf("tool schema %q has risk %d, not a set of risk flags", spec.Name, risk)
		}
		spec.Risk = harness.Risk(risk)
		if len(schema) > 0 {
			spec.InputSchema = json.RawMessage(schema)
		}
		l := lists[h]
		if l == nil {
			l = &list{tools: make([]harness.ToolSpec, 0, tools), n: tools, bytes: bytes}
			lists[h] = l
		}
		if pos != len(l.tools)+1 {
			return fmt.Errorf("tool list %s lacks member %d", short(h), len(l.tools)+1)
		}
		l.tools = append(l.tools, spec)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tool lists: %w", err)
	}
	for h, idx := range sets {
		l := lists[h]
		if l == nil || len(l.tools) != l.n {
			q := out[idx[0]]
			return nil, fmt.Errorf("turn %d round %d refers to tool list %s, which the store does not hold whole", q.Turn, q.Round, short(h))
		}
		for _, i := range idx {
			out[i].Tools, out[i].ToolBytes = l.tools, l.bytes
		}
	}
	return out, nil
}

// short abbreviates a content hash for messages.
func short(h string) string { return h[:min(len(h), 12)] }
