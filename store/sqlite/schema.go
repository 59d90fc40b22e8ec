package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentharness/harness/store/internal/migrate"
)

// migrations is the schema history. Version 1 holds the transcript;
// version 2 adds events, per-turn view cuts, guard markers and titles;
// version 3 the clearing marks of compaction notes (Note.ClearTurn/ClearRound);
// version 4 what each request offered: its system prompt and tool schemas;
// version 5 every call a cut's model copy points at (harness.Cut.Refs);
// version 6 the lease of the writer running a turn on each conversation;
// version 7 payloads too large for one SQLite value, in chunks;
// version 8 when each round's response arrived (harness.Round.Answered);
// version 9 each turn's context messages (harness.Turn.Context);
// version 10 the proxy's savings (savings.go); version 11 the proxy
// replicas' claims (claim.go); version 12 the proxy's fork links and
// result decisions (decisions.go).
var migrations = []migrate.Step{
	{Version: 1, Name: "transcript", SQL: `
CREATE TABLE conversations (
	id         TEXT PRIMARY KEY,
	created_ns INTEGER NOT NULL,
	updated_ns INTEGER NOT NULL
);
CREATE TABLE turns (
	conv_id      TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
	idx          INTEGER NOT NULL,
	input        TEXT NOT NULL,
	outcome      TEXT NOT NULL DEFAULT '',
	started_ns   INTEGER NOT NULL DEFAULT 0,
	ended_ns     INTEGER NOT NULL DEFAULT 0,
	input_tokens       INTEGER NOT NULL DEFAULT 0,
	cached_tokens      INTEGER NOT NULL DEFAULT 0,
	cache_write_tokens INTEGER NOT NULL DEFAULT 0,
	output_tokens      INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (conv_id, idx)
);
CREATE TABLE rounds (
	conv_id TEXT NOT NULL,
	turn    INTEGER NOT NULL,
	idx     INTEGER NOT NULL,
	final   INTEGER NOT NULL DEFAULT 0,
	input_tokens       INTEGER NOT NULL DEFAULT 0,
	cached_tokens      INTEGER NOT NULL DEFAULT 0,
	cache_write_tokens INTEGER NOT NULL DEFAULT 0,
	output_tokens      INTEGER NOT NULL DEFAULT 0,
	req_messages       INTEGER NOT NULL DEFAULT 0,
	req_evidence_chars INTEGER NOT NULL DEFAULT 0,
	req_tools          INTEGER NOT NULL DEFAULT 0,
	req_tool_bytes     INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (conv_id, turn, idx),
	FOREIGN KEY (conv_id, turn) REFERENCES turns(conv_id, idx) ON DELETE CASCADE
);
-- The assistant message of each round (user inputs are in turns).
CREATE TABLE messages (
	conv_id      TEXT NOT NULL,
	turn         INTEGER NOT NULL,
	round        INTEGER NOT NULL,
	role         TEXT NOT NULL,
	parts        BLOB,
	tool_call_id TEXT NOT NULL DEFAULT '',
	tool_name    TEXT NOT NULL DEFAULT '',
	is_error     INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (conv_id, turn, round),
	FOREIGN KEY (conv_id, turn, round) REFERENCES rounds(conv_id, turn, idx) ON DELETE CASCADE
);
-- The calls of each assistant message; dropped = 1 for calls made while
-- tools were withheld (never run).
CREATE TABLE tool_calls (
	conv_id TEXT NOT NULL,
	turn    INTEGER NOT NULL,
	round   INTEGER NOT NULL,
	dropped INTEGER NOT NULL,
	seq     INTEGER NOT NULL,
	call_id TEXT NOT NULL,
	name    TEXT NOT NULL,
	args    BLOB,
	PRIMARY KEY (conv_id, turn, round, dropped, seq),
	FOREIGN KEY (conv_id, turn, round) REFERENCES rounds(conv_id, turn, idx) ON DELETE CASCADE
);
-- One row per result: everything but the full payload. The model's copy,
-- when a guard changed it, is model_text (one text part, the common case,
-- stored as is) or model (JSON parts); both NULL mean the full payload.
CREATE TABLE results (
	conv_id     TEXT NOT NULL,
	turn        INTEGER NOT NULL,
	round       INTEGER NOT NULL,
	seq         INTEGER NOT NULL,
	call_id     TEXT NOT NULL,
	tool        TEXT NOT NULL,
	is_error    INTEGER NOT NULL DEFAULT 0,
	timed_out   INTEGER NOT NULL DEFAULT 0,
	bytes       INTEGER NOT NULL,
	full_chars  INTEGER NOT NULL,
	model_bytes INTEGER NOT NULL,
	model_chars INTEGER NOT NULL,
	model_text  TEXT,
	model       BLOB,
	meta        BLOB,
	PRIMARY KEY (conv_id, turn, round, seq),
	FOREIGN KEY (conv_id, turn, round) REFERENCES rounds(conv_id, turn, idx) ON DELETE CASCADE
);
CREATE INDEX results_by_call ON results(conv_id, call_id);
-- The full payloads, apart, so that listing and loading never page them in:
-- text (one text part) or parts (JSON), and structured content.
CREATE TABLE result_bodies (
	conv_id    TEXT NOT NULL,
	turn       INTEGER NOT NULL,
	round      INTEGER NOT NULL,
	seq        INTEGER NOT NULL,
	text       TEXT,
	parts      BLOB,
	structured BLOB,
	PRIMARY KEY (conv_id, turn, round, seq),
	FOREIGN KEY (conv_id, turn, round, seq) REFERENCES results(conv_id, turn, round, seq) ON DELETE CASCADE
);
-- The guards' cuts of each result's model copy, in order.
CREATE TABLE cuts (
	conv_id   TEXT NOT NULL,
	turn      INTEGER NOT NULL,
	round     INTEGER NOT NULL,
	seq       INTEGER NOT NULL,
	n         INTEGER NOT NULL,
	kind      TEXT NOT NULL,
	by        TEXT NOT NULL DEFAULT '',
	bytes_in  INTEGER NOT NULL,
	bytes_out INTEGER NOT NULL,
	locator   TEXT NOT NULL DEFAULT '',
	of        TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (conv_id, turn, round, seq, n),
	FOREIGN KEY (conv_id, turn, round, seq) REFERENCES results(conv_id, turn, round, seq) ON DELETE CASCADE
);
CREATE TABLE notes (
	conv_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
	seq     INTEGER NOT NULL,
	after   INTEGER NOT NULL,
	text    TEXT NOT NULL,
	by      TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (conv_id, seq)
);
`},
	{Version: 2, Name: "events, view cuts, markers and titles", SQL: `
ALTER TABLE conversations ADD COLUMN title TEXT NOT NULL DEFAULT '';
UPDATE conversations SET title = COALESCE((
	SELECT substr(CASE WHEN instr(input, char(10)) > 0 THEN substr(input, 1, instr(input, char(10)) - 1) ELSE input END, 1, 80)
	FROM turns WHERE turns.conv_id = conversations.id ORDER BY idx LIMIT 1), '');
ALTER TABLE results ADD COLUMN marker TEXT NOT NULL DEFAULT '';
-- Every event of a run, as JSON. No foreign key: an event sink may see a
-- conversation before (or without) the recorder.
CREATE TABLE events (
	id      INTEGER PRIMARY KEY AUTOINCREMENT,
	conv_id TEXT NOT NULL,
	turn    INTEGER NOT NULL,
	round   INTEGER NOT NULL,
	kind    TEXT NOT NULL,
	time_ns INTEGER NOT NULL,
	body    BLOB NOT NULL
);
CREATE INDEX events_by_conv ON events(conv_id, turn, id);
-- What per-turn policies did to a result in one request (view only).
CREATE TABLE view_cuts (
	id        INTEGER PRIMARY KEY AUTOINCREMENT,
	conv_id   TEXT NOT NULL,
	turn      INTEGER NOT NULL,
	request   INTEGER NOT NULL,
	call_id   TEXT NOT NULL,
	kind      TEXT NOT NULL,
	by        TEXT NOT NULL DEFAULT '',
	bytes_in  INTEGER NOT NULL,
	bytes_out INTEGER NOT NULL,
	size_in   INTEGER NOT NULL DEFAULT 0,
	size_out  INTEGER NOT NULL DEFAULT 0,
	unit      TEXT NOT NULL DEFAULT '',
	locator   TEXT NOT NULL DEFAULT '',
	marker    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX view_cuts_by_call ON view_cuts(conv_id, turn, call_id);
`},
	{Version: 3, Name: "compaction clearing marks on notes", SQL: `
ALTER TABLE notes ADD COLUMN clear_turn INTEGER NOT NULL DEFAULT 0;
ALTER TABLE notes ADD COLUMN clear_round INTEGER NOT NULL DEFAULT 0;
`},
	{Version: 4, Name: "system prompts and tool schemas of each request", SQL: `
-- Every distinct tool schema a request sent, once, by content hash
-- (schemaHash): name, description, input schema and risk. bytes is
-- harness.SchemaBytes, the size the model is sent.
CREATE TABLE tool_schemas (
	hash         TEXT PRIMARY KEY,
	name         TEXT NOT NULL,
	description  TEXT NOT NULL,
	input_schema BLOB,
	risk         INTEGER NOT NULL,
	bytes        INTEGER NOT NULL
);
-- Every distinct list of schemas a request sent, once: the hash of its
-- members' hashes in order, its size, and the members.
CREATE TABLE tool_sets (
	hash  TEXT PRIMARY KEY,
	tools INTEGER NOT NULL,
	bytes INTEGER NOT NULL
);
CREATE TABLE tool_set_members (
	set_hash    TEXT NOT NULL REFERENCES tool_sets(hash) ON DELETE CASCADE,
	pos         INTEGER NOT NULL,
	schema_hash TEXT NOT NULL REFERENCES tool_schemas(hash),
	PRIMARY KEY (set_hash, pos)
);
CREATE INDEX tool_set_members_by_schema ON tool_set_members(schema_hash);
-- Every distinct system prompt, once.
CREATE TABLE system_prompts (
	hash  TEXT PRIMARY KEY,
	text  TEXT NOT NULL,
	bytes INTEGER NOT NULL
);
-- The request of each round: req_recorded = 0 for rounds stored before
-- (or without) request recording; req_system and req_tool_set are the
-- hashes of its system prompt and tool list, '' for none.
ALTER TABLE rounds ADD COLUMN req_recorded INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rounds ADD COLUMN req_system TEXT NOT NULL DEFAULT '';
ALTER TABLE rounds ADD COLUMN req_tool_set TEXT NOT NULL DEFAULT '';
CREATE INDEX rounds_by_system ON rounds(req_system) WHERE req_system != '';
CREATE INDEX rounds_by_tool_set ON rounds(req_tool_set) WHERE req_tool_set != '';
`},
	{Version: 5, Name: "every call a cut points at", SQL: `
-- harness.Cut.Refs: NULL for none, else a JSON array of the call ids in
-- order, each a string, or {"b64": …} for an id that is not valid UTF-8
-- (refs.go). Cuts stored before this version have NULL: their Refs load
-- empty, and only "of" (the first call referred to) is known.
ALTER TABLE cuts ADD COLUMN refs TEXT;
`},
	{Version: 6, Name: "conversation leases", SQL: `
-- The writer running a turn on a conversation (lease.go): one row while a
-- turn runs, deleted when it ends; expires_ns is renewed by every write.
CREATE TABLE leases (
	conv_id     TEXT PRIMARY KEY,
	owner       TEXT NOT NULL,
	host        TEXT NOT NULL,
	pid         INTEGER NOT NULL,
	acquired_ns INTEGER NOT NULL,
	expires_ns  INTEGER NOT NULL
);
`},
	{Version: 7, Name: "payloads in chunks", SQL: `
-- A payload above Options.ChunkBytes (chunks.go): result_bodies.text and
-- .parts are NULL and chunked names the column the joined chunks stand for.
ALTER TABLE result_bodies ADD COLUMN chunked TEXT NOT NULL DEFAULT '';
CREATE TABLE result_chunks (
	conv_id TEXT NOT NULL,
	turn    INTEGER NOT NULL,
	round   INTEGER NOT NULL,
	seq     INTEGER NOT NULL,
	n       INTEGER NOT NULL,
	data    BLOB NOT NULL,
	PRIMARY KEY (conv_id, turn, round, seq, n),
	FOREIGN KEY (conv_id, turn, round, seq) REFERENCES results(conv_id, turn, round, seq) ON DELETE CASCADE
);
`},
	{Version: 8, Name: "when each round was answered", SQL: `
-- harness.Round.Answered in Unix nanoseconds; 0 for rounds stored before
-- this version, which load with a zero time (View.Idle then falls back to
-- the turns' end times).
ALTER TABLE rounds ADD COLUMN answered_ns INTEGER NOT NULL DEFAULT 0;
`},
	{Version: 9, Name: "context messages of each turn", SQL: `
-- harness.Turn.Context: one row per message, seq in the turn's order;
-- after_input = 1 for a message the client sent after the turn's input.
-- Turns stored before this version have none: they load without context.
CREATE TABLE turn_context (
	conv_id     TEXT NOT NULL,
	turn        INTEGER NOT NULL,
	seq         INTEGER NOT NULL,
	after_input INTEGER NOT NULL DEFAULT 0,
	text        TEXT NOT NULL,
	PRIMARY KEY (conv_id, turn, seq),
	FOREIGN KEY (conv_id, turn) REFERENCES turns(conv_id, idx) ON DELETE CASCADE
);
`},
	savingsMigration,
	{Version: 11, Name: "proxy replica claims", SQL: claimsSchema},
	recordsMigration,
}

// schemaVersion is the schema version this package writes.
func schemaVersion() int { return migrate.Latest(migrations) }

// migrateTo brings the database up to version target (all migrations
// when target is 0). Each step runs in its own write transaction and
// re-reads the version inside it, so two processes opening one new file at
// once apply each step once.
func migrateTo(ctx context.Context, db *sql.DB, target int) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER PRIMARY KEY,
	name       TEXT NOT NULL,
	applied_ns INTEGER NOT NULL
)`); err != nil {
		return fmt.Errorf("creating schema_migrations: %w", err)
	}
	for _, m := range migrate.Due(migrations, 0, target) {
		if err := applyMigration(ctx, db, m); err != nil {
			return err
		}
	}
	var newest int
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&newest); err != nil {
		return fmt.Errorf("reading the schema version: %w", err)
	}
	return migrate.CheckNewest(newest, migrations)
}

func applyMigration(ctx context.Context, db *sql.DB, m migrate.Step) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migration %d: %w", m.Version, err)
	}
	defer tx.Rollback()
	var done int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, m.Version).Scan(&done); err != nil {
		return fmt.Errorf("migration %d: %w", m.Version, err)
	}
	if done > 0 {
		return nil
	}
	exec := func(ctx context.Context, q string, args ...any) error {
		_, err := tx.ExecContext(ctx, q, args...)
		return err
	}
	if err := migrate.Apply(ctx, exec, m); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migration %d: %w", m.Version, err)
	}
	return nil
}
