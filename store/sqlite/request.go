package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/codec"
)

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
	s.requests.Put(conv.ID, turn.Index, req.Round, codec.NewRequest(req))
	return nil
}

// writeRequest stores the system prompt and the tool list of a request,
// each only when the store does not hold it yet. The round row refers to
// them by hash.
func writeRequest(w *txw, p *codec.Request) error {
	if p.SystemHash != "" {
		if _, err := w.exec(`INSERT OR IGNORE INTO system_prompts (hash, text, bytes) VALUES (?, ?, ?)`,
			p.SystemHash, p.System, len(p.System)); err != nil {
			return fmt.Errorf("system prompt: %w", err)
		}
	}
	if p.SetHash == "" {
		return nil
	}
	res, err := w.exec(`INSERT OR IGNORE INTO tool_sets (hash, tools, bytes) VALUES (?, ?, ?)`, p.SetHash, len(p.Specs), p.SetBytes)
	if err != nil {
		return fmt.Errorf("tool list: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("tool list: %w", err)
	} else if n == 0 {
		return nil // stored with its members by an earlier round
	}
	for i, t := range p.Specs {
		var schema []byte
		if len(t.InputSchema) > 0 {
			schema = t.InputSchema
		}
		if _, err := w.exec(`INSERT OR IGNORE INTO tool_schemas (hash, name, description, input_schema, risk, bytes) VALUES (?, ?, ?, ?, ?, ?)`,
			p.Hashes[i], t.Name, t.Description, schema, int(t.Risk), p.Bytes[i]); err != nil {
			return fmt.Errorf("tool schema %q: %w", t.Name, err)
		}
		if _, err := w.exec(`INSERT INTO tool_set_members (set_hash, pos, schema_hash) VALUES (?, ?, ?)`, p.SetHash, i+1, p.Hashes[i]); err != nil {
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
	var reqs codec.Requests
	err := query(ctx, tx, `SELECT r.turn, r.idx, r.final, r.req_recorded, r.req_system, r.req_tool_set, p.text, p.bytes
FROM rounds r LEFT JOIN system_prompts p ON p.hash = r.req_system AND r.req_system != ''
WHERE r.conv_id = ? AND (? = 0 OR r.turn = ?) ORDER BY r.turn, r.idx`, []any{convID, turn, turn}, func(rows *sql.Rows) error {
		var (
			q          store.Request
			final, rec int
			sysHash    string
			text       sql.NullString
			bytes      sql.NullInt64
		)
		if err := rows.Scan(&q.Turn, &q.Round, &final, &rec, &sysHash, &q.ToolSet, &text, &bytes); err != nil {
			return err
		}
		q.Final, q.Recorded = final != 0, rec != 0
		q.System, q.SystemBytes = text.String, int(bytes.Int64)
		return reqs.Round(q, sysHash, text.Valid)
	})
	if err != nil {
		return nil, fmt.Errorf("rounds: %w", err)
	}
	if !reqs.Lists() {
		return reqs.Out, nil
	}
	err = query(ctx, tx, `SELECT t.hash, t.tools, t.bytes, m.pos, s.name, s.description, s.input_schema, s.risk
FROM tool_sets t JOIN tool_set_members m ON m.set_hash = t.hash JOIN tool_schemas s ON s.hash = m.schema_hash
WHERE t.hash IN (SELECT DISTINCT req_tool_set FROM rounds WHERE conv_id = ? AND (? = 0 OR turn = ?) AND req_tool_set != '')
ORDER BY t.hash, m.pos`, []any{convID, turn, turn}, func(rows *sql.Rows) error {
		var (
			h                 string
			tools, bytes, pos int
			spec              harness.ToolSpec
			schema            []byte
			risk              int64
		)
		if err := rows.Scan(&h, &tools, &bytes, &pos, &spec.Name, &spec.Description, &schema, &risk); err != nil {
			return err
		}
		if len(schema) > 0 {
			spec.InputSchema = json.RawMessage(schema)
		}
		return reqs.Member(h, tools, bytes, pos, spec, risk)
	})
	if err != nil {
		return nil, fmt.Errorf("tool lists: %w", err)
	}
	return reqs.Done()
}
