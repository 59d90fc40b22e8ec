package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/codec"
	"github.com/agentharness/harness/store/internal/rows"
)

// AddRequest keeps what a request offers (its system prompt and the tool
// schemas it sends) until AddRound stores the round it produced, in the
// same transaction. A retried request replaces the one before it; the
// requests of a turn whose model call failed are dropped at EndTurn.
func (s *pgStore) AddRequest(ctx context.Context, conv *harness.Conversation, turn *harness.Turn, req *harness.Request) error {
	if err := s.requests.Add(conv, turn, req); err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
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
	for _, q := range codec.RequestGarbage() {
		w.queue("its system prompts and tool schemas", q)
	}
}

// Requests returns what each stored round's request offered: the system
// prompt and the tool schemas sent, one entry per round in order (of turn
// only, when turn is not 0). Rounds that share a tool list share one
// slice of schemas. A round stored without its request (Save) has
// Recorded false.
func (s *pgStore) Requests(ctx context.Context, convID string, turn int) ([]store.Request, error) {
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
	var reqs rows.Requests
	args := []any{b(convID), turn}
	err := rows.Run(queryIn(ctx, tx), rows.Step{What: "rounds", SQL: `SELECT ` + rows.RequestColumns + `
FROM rounds r LEFT JOIN system_prompts p ON p.hash = r.req_system AND r.req_system <> ''
WHERE r.conv_id = $1 AND ($2 = 0 OR r.turn = $2) ORDER BY r.turn, r.idx`, Args: args, Row: reqs.ScanRound})
	if err != nil || !reqs.Lists() {
		return reqs.Out, err
	}
	err = rows.Run(queryIn(ctx, tx), rows.Step{What: "tool lists", SQL: `SELECT ` + rows.MemberColumns + `
FROM tool_sets t JOIN tool_set_members m ON m.set_hash = t.hash JOIN tool_schemas s ON s.hash = m.schema_hash
WHERE t.hash IN (SELECT DISTINCT req_tool_set FROM rounds WHERE conv_id = $1 AND ($2 = 0 OR turn = $2) AND req_tool_set <> '')
ORDER BY t.hash, m.pos`, Args: args, Row: reqs.ScanMember})
	if err != nil {
		return nil, err
	}
	return reqs.Done()
}
