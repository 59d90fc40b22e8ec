package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

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
		return errors.New("postgres store: the conversation has no id")
	case turn == nil || req == nil:
		return errors.New("postgres store: AddRequest needs a turn and a request")
	}
	s.requests.Put(conv.ID, turn.Index, req.Round, codec.NewRequest(req))
	return nil
}

// writeRequest queues the system prompt and the tool list of a request,
// each stored only when the store does not hold it yet: the round row
// refers to them by hash. The shared lock keeps a deletion's garbage collection (which takes
// it exclusively) from removing a list this transaction refers to before
// it commits.
func writeRequest(w *txw, where string, p *codec.Request) error {
	if p.SystemHash == "" && p.SetHash == "" {
		return nil
	}
	w.queue(where+": request", `SELECT pg_advisory_xact_lock_shared($1)`, int64(gcLock))
	if p.SystemHash != "" {
		w.queue(where+": system prompt", `INSERT INTO system_prompts (hash, text, bytes) VALUES ($1, $2, $3) ON CONFLICT (hash) DO NOTHING`,
			p.SystemHash, b(p.System), len(p.System))
	}
	if p.SetHash == "" {
		return nil
	}
	// Three statements whatever the list's length; a list stored by an
	// earlier round (the common case: a turn's rounds share theirs) finds
	// its hash and writes nothing. Two transactions storing one new list:
	// the second waits on the list's key until the first commits, then
	// sees its members.
	n := len(p.Specs)
	hashes, names, descs, schemas := make([]string, n), make([][]byte, n), make([][]byte, n), make([][]byte, n)
	risks, sizes, pos := make([]int32, n), make([]int64, n), make([]int32, n)
	for i, t := range p.Specs {
		hashes[i], names[i], descs[i], risks[i], sizes[i], pos[i] = p.Hashes[i], b(t.Name), b(t.Description), int32(t.Risk), int64(p.Bytes[i]), int32(i+1)
		if len(t.InputSchema) > 0 {
			schemas[i] = nullBytes(t.InputSchema)
		}
	}
	w.queue(where+": tool schemas", `INSERT INTO tool_schemas (hash, name, description, input_schema, risk, bytes)
SELECT * FROM unnest($1::text[], $2::bytea[], $3::bytea[], $4::bytea[], $5::integer[], $6::bigint[])
WHERE NOT EXISTS (SELECT 1 FROM tool_sets WHERE hash = $7) ON CONFLICT (hash) DO NOTHING`, hashes, names, descs, schemas, risks, sizes, p.SetHash)
	w.queue(where+": tool list", `INSERT INTO tool_sets (hash, tools, bytes) VALUES ($1, $2, $3) ON CONFLICT (hash) DO NOTHING`,
		p.SetHash, n, p.SetBytes)
	w.queue(where+": tool list", `INSERT INTO tool_set_members (set_hash, pos, schema_hash)
SELECT $1, m.pos, m.hash FROM unnest($2::integer[], $3::text[]) AS m(pos, hash)
WHERE NOT EXISTS (SELECT 1 FROM tool_set_members WHERE set_hash = $1)`, p.SetHash, pos, hashes)
	return nil
}

// gcLock is the advisory lock key that orders the garbage collection of
// prompts and tool lists after the rounds that refer to them.
const gcLock = 0x6861726e65737331 // "harness1"

// collectRequestGarbage queues the removal of the system prompts, tool
// lists and schemas no stored round refers to any more (after a deletion).
// They are shared between conversations, so only those nothing uses go;
// the exclusive lock waits for the rounds being written to commit.
func collectRequestGarbage(w *txw) {
	w.queue("its system prompts and tool schemas", `SELECT pg_advisory_xact_lock($1)`, int64(gcLock))
	for _, q := range []string{
		`DELETE FROM tool_set_members WHERE set_hash IN (SELECT hash FROM tool_sets t WHERE NOT EXISTS (SELECT 1 FROM rounds r WHERE r.req_tool_set = t.hash))`,
		`DELETE FROM tool_sets WHERE NOT EXISTS (SELECT 1 FROM rounds r WHERE r.req_tool_set = tool_sets.hash)`,
		`DELETE FROM tool_schemas WHERE NOT EXISTS (SELECT 1 FROM tool_set_members m WHERE m.schema_hash = tool_schemas.hash)`,
		`DELETE FROM system_prompts WHERE NOT EXISTS (SELECT 1 FROM rounds r WHERE r.req_system = system_prompts.hash)`,
	} {
		w.queue("its system prompts and tool schemas", q)
	}
}

// Requests returns what each stored round's request offered: the system
// prompt and the tool schemas sent, one entry per round in order (of turn
// only, when turn is not 0). Rounds that share a tool list share one
// slice of schemas. A round stored without its request (Save) has
// Recorded false.
func (s *Store) Requests(ctx context.Context, convID string, turn int) ([]store.Request, error) {
	var out []store.Request
	err := s.read(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = requestsTx(ctx, tx, convID, turn)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres store: requests of %s: %w", convID, err)
	}
	return out, nil
}

func requestsTx(ctx context.Context, tx pgx.Tx, convID string, turn int) ([]store.Request, error) {
	if err := exists(ctx, tx, convID); err != nil {
		return nil, err
	}
	var reqs codec.Requests
	err := query(ctx, tx, `SELECT r.turn, r.idx, r.final, r.req_recorded, r.req_system, r.req_tool_set, p.text, p.bytes
FROM rounds r LEFT JOIN system_prompts p ON p.hash = r.req_system AND r.req_system <> ''
WHERE r.conv_id = $1 AND ($2 = 0 OR r.turn = $2) ORDER BY r.turn, r.idx`, []any{b(convID), turn}, func(rows pgx.Rows) error {
		var (
			q       store.Request
			sysHash string
			text    []byte
			bytes   *int64
		)
		if err := rows.Scan(&q.Turn, &q.Round, &q.Final, &q.Recorded, &sysHash, &q.ToolSet, &text, &bytes); err != nil {
			return err
		}
		q.System = string(text)
		if bytes != nil {
			q.SystemBytes = int(*bytes)
		}
		return reqs.Round(q, sysHash, bytes != nil)
	})
	if err != nil {
		return nil, fmt.Errorf("rounds: %w", err)
	}
	if !reqs.Lists() {
		return reqs.Out, nil
	}
	err = query(ctx, tx, `SELECT t.hash, t.tools, t.bytes, m.pos, s.name, s.description, s.input_schema, s.risk
FROM tool_sets t JOIN tool_set_members m ON m.set_hash = t.hash JOIN tool_schemas s ON s.hash = m.schema_hash
WHERE t.hash IN (SELECT DISTINCT req_tool_set FROM rounds WHERE conv_id = $1 AND ($2 = 0 OR turn = $2) AND req_tool_set <> '')
ORDER BY t.hash, m.pos`, []any{b(convID), turn}, func(rows pgx.Rows) error {
		var (
			h                 string
			tools, bytes, pos int
			spec              harness.ToolSpec
			schema            []byte
			risk              int64
		)
		if err := rows.Scan(&h, &tools, &bytes, &pos, str{&spec.Name}, str{&spec.Description}, &schema, &risk); err != nil {
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
