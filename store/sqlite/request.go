package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/codec"
	"github.com/agentharness/harness/store/internal/rows"
)

// AddRequest keeps what a request offers (its system prompt and the tool
// schemas it sends) until AddRound stores the round it produced, in the
// same transaction. A retried request replaces the one before it; the
// requests of a turn whose model call failed are dropped at EndTurn.
func (s *sqliteStore) AddRequest(ctx context.Context, conv *harness.Conversation, turn *harness.Turn, req *harness.Request) error {
	if err := s.requests.Add(conv, turn, req); err != nil {
		return fmt.Errorf("sqlite store: %w", err)
	}
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
// schemas no stored round refers to any more (after a deletion).
func collectRequestGarbage(w *txw) error {
	for _, q := range codec.RequestGarbage("") {
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
func (s *sqliteStore) Requests(ctx context.Context, convID string, turn int) ([]store.Request, error) {
	var out []store.Request
	err := s.read(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = requestsTx(ctx, tx, convID, turn)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: requests of %s: %w", convID, err)
	}
	return out, nil
}

func requestsTx(ctx context.Context, tx *sql.Tx, convID string, turn int) ([]store.Request, error) {
	if err := exists(ctx, tx, convID); err != nil {
		return nil, err
	}
	var reqs rows.Requests
	args := []any{convID, turn, turn}
	err := rows.Run(queryIn(ctx, tx), rows.Step{What: "rounds", SQL: `SELECT ` + rows.RequestColumns + `
FROM rounds r LEFT JOIN system_prompts p ON p.hash = r.req_system AND r.req_system != ''
WHERE r.conv_id = ? AND (? = 0 OR r.turn = ?) ORDER BY r.turn, r.idx`, Args: args, Row: reqs.ScanRound})
	if err != nil || !reqs.Lists() {
		return reqs.Out, err
	}
	err = rows.Run(queryIn(ctx, tx), rows.Step{What: "tool lists", SQL: `SELECT ` + rows.MemberColumns + `
FROM tool_sets t JOIN tool_set_members m ON m.set_hash = t.hash JOIN tool_schemas s ON s.hash = m.schema_hash
WHERE t.hash IN (SELECT DISTINCT req_tool_set FROM rounds WHERE conv_id = ? AND (? = 0 OR turn = ?) AND req_tool_set != '')
ORDER BY t.hash, m.pos`, Args: args, Row: reqs.ScanMember})
	if err != nil {
		return nil, err
	}
	return reqs.Done()
}
