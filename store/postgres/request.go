package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/codec"
	"github.com/agentharness/harness/store/internal/migrate"
	"github.com/agentharness/harness/store/internal/rows"
)

// AddRequest stores what a request offers (its system prompt and the tool
// schemas it sends) for the round it will produce, in a transaction of its
// own: on the turn's connection while this store holds the turn and the
// connection lives, else on a pooled one, never waiting for the
// conversation's lock. The round may
// be stored before or after it, by this or another process (a proxy
// replica stores a round when the conversation's next request reaches it,
// which another replica may have served); Requests reads the two
// together. A retried request replaces the one before it; the requests of
// a turn whose model call failed are removed at EndTurn.
func (s *pgStore) AddRequest(ctx context.Context, conv *harness.Conversation, turn *harness.Turn, req *harness.Request) error {
	p, err := codec.RequestOf(conv, turn, req)
	if err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	write := func(w *txw) error {
		where := fmt.Sprintf("request of turn %d round %d of %s", turn.Index, req.Round, conv.ID)
		if err := writeRequest(w, where, p); err != nil {
			return fmt.Errorf("postgres store: %w", err)
		}
		w.queue(where, `INSERT INTO round_requests (conv_id, turn, round, system, tool_set) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (conv_id, turn, round) DO UPDATE SET system = excluded.system, tool_set = excluded.tool_set`,
			b(conv.ID), turn.Index, req.Round, p.SystemHash, p.SetHash)
		return nil
	}
	if ok, err := s.heldTx(ctx, conv.ID, turn, false, write); ok {
		return err
	}
	return s.pooled(ctx, "", write)
}

// requestsMigration is migration 8: each round's request in a row of its
// own (round_requests), written by AddRequest whichever process stores the
// round, before or after it.
var requestsMigration = migrate.Step{Version: 8, Name: "the request of each round, apart from the round", SQL: `
-- What the request of each round offered: the hashes of its system prompt
-- and tool list ('' for none). A round and its request may be written by
-- two processes in either order, so there is no foreign key; Delete
-- removes the rows with their conversation, EndTurn those whose round
-- never came. Rounds stored before this version keep their request in
-- rounds (req_recorded, req_system, req_tool_set), which reads fall back
-- to when a round has no row here.
CREATE TABLE round_requests (
	conv_id  bytea NOT NULL,
	turn     integer NOT NULL,
	round    integer NOT NULL,
	system   text NOT NULL DEFAULT '',
	tool_set text NOT NULL DEFAULT '',
	PRIMARY KEY (conv_id, turn, round)
);
CREATE INDEX round_requests_by_system ON round_requests (system) WHERE system <> '';
CREATE INDEX round_requests_by_tool_set ON round_requests (tool_set) WHERE tool_set <> '';
`}

// writeRequest queues the system prompt and the tool list of a request,
// each stored only when the store does not hold it yet: the request's row
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
// the exclusive lock waits for the requests being written to commit.
func collectRequestGarbage(w *txw) {
	w.queue("its system prompts and tool schemas", `SELECT pg_advisory_xact_lock($1)`, int64(gcLock))
	for _, q := range codec.RequestGarbage("round_requests") {
		w.queue("its system prompts and tool schemas", q)
	}
}

// Requests returns what each stored round's request offered: the system
// prompt and the tool schemas sent, one entry per round in order (of turn
// only, when turn is not 0). Rounds that share a tool list share one
// slice of schemas. A round stored without its request (Save, or a
// request never stored) has Recorded false.
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

// roundRequests selects, for each round of conversation $1 (of turn $2
// when not 0), its request's columns: its row in round_requests, else
// what rounds kept of it (rounds stored before round_requests existed).
const roundRequests = `SELECT r.turn, r.idx, r.final, r.req_recorded OR q.conv_id IS NOT NULL AS recorded,
	CASE WHEN q.conv_id IS NULL THEN r.req_system ELSE q.system END AS system,
	CASE WHEN q.conv_id IS NULL THEN r.req_tool_set ELSE q.tool_set END AS tool_set
FROM rounds r LEFT JOIN round_requests q ON q.conv_id = r.conv_id AND q.turn = r.turn AND q.round = r.idx
WHERE r.conv_id = $1 AND ($2 = 0 OR r.turn = $2)`

func requestsTx(ctx context.Context, tx pgx.Tx, convID string, turn int) ([]store.Request, error) {
	if err := exists(ctx, tx, convID); err != nil {
		return nil, err
	}
	var reqs rows.Requests
	args := []any{b(convID), turn}
	// The columns of rows.RequestColumns, from roundRequests.
	err := rows.Run(queryIn(ctx, tx), rows.Step{What: "rounds", SQL: `SELECT r.turn, r.idx, r.final, r.recorded, r.system, r.tool_set, p.text, p.bytes
FROM (` + roundRequests + `) r LEFT JOIN system_prompts p ON p.hash = r.system AND r.system <> ''
ORDER BY r.turn, r.idx`, Args: args, Row: reqs.ScanRound})
	if err != nil || !reqs.Lists() {
		return reqs.Out, err
	}
	err = rows.Run(queryIn(ctx, tx), rows.Step{What: "tool lists", SQL: `SELECT ` + rows.MemberColumns + `
FROM tool_sets t JOIN tool_set_members m ON m.set_hash = t.hash JOIN tool_schemas s ON s.hash = m.schema_hash
WHERE t.hash IN (SELECT DISTINCT r.tool_set FROM (` + roundRequests + `) r WHERE r.tool_set <> '')
ORDER BY t.hash, m.pos`, Args: args, Row: reqs.ScanMember})
	if err != nil {
		return nil, err
	}
	return reqs.Done()
}
