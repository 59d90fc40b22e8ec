package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentharness/harness/store/internal/migrate"
)

// migrations is the schema history. Version 1 is what store/sqlite's
// schema v5 holds, in PostgreSQL's types; version 2 adds when each round's
// response arrived (harness.Round.Answered), as store/sqlite's v8;
// version 3 each turn's context messages (harness.Turn.Context), as
// store/sqlite's v9; version 4 the queue key of each event and view cut
// (codec.Queued.Key), unique, so an event requeued after a COMMIT whose
// reply was lost is not stored twice (store/sqlite has no such step: its
// commits have no reply to lose); version 5 the proxy's savings, as
// store/sqlite's v10 (savings.go); version 6 the proxy replicas' claims
// (claim.go); version 7 the proxy's fork links and result decisions
// (decisions.go); version 8 each round's request apart from the round
// (request.go: the proxy replica that stores a round may not be the one
// that served its request; store/sqlite keeps them in rounds).
//
// Every string a model, a tool or a user wrote (ids, inputs, texts,
// names, locators) is bytea: PostgreSQL's text refuses NUL and invalid
// UTF-8, and the store keeps every byte. Only content hashes, which the
// store computes, are text.
var migrations = []migrate.Step{
	{Version: 1, Name: "transcript, events, requests", SQL: `
-- Every write touches updated_ns: no index on it and room in each page, so
-- the update can be heap-only (HOT) and leave no dead index entries. List
-- reads every row anyway.
CREATE TABLE conversations (
	id         bytea PRIMARY KEY,
	title      bytea NOT NULL DEFAULT '',
	created_ns bigint NOT NULL,
	updated_ns bigint NOT NULL
) WITH (fillfactor = 50);
CREATE TABLE turns (
	conv_id      bytea NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
	idx          integer NOT NULL,
	input        bytea NOT NULL,
	outcome      bytea NOT NULL DEFAULT '',
	started_ns   bigint NOT NULL DEFAULT 0,
	ended_ns     bigint NOT NULL DEFAULT 0,
	input_tokens       bigint NOT NULL DEFAULT 0,
	cached_tokens      bigint NOT NULL DEFAULT 0,
	cache_write_tokens bigint NOT NULL DEFAULT 0,
	output_tokens      bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (conv_id, idx)
);
-- Every distinct tool schema a request sent, once, by content hash; bytes
-- is harness.SchemaBytes, the size the model is sent.
CREATE TABLE tool_schemas (
	hash         text PRIMARY KEY,
	name         bytea NOT NULL,
	description  bytea NOT NULL,
	input_schema bytea,
	risk         integer NOT NULL,
	bytes        bigint NOT NULL
);
-- Every distinct list of schemas a request sent, once: the hash of its
-- members' hashes in order, its size, and the members.
CREATE TABLE tool_sets (
	hash  text PRIMARY KEY,
	tools integer NOT NULL,
	bytes bigint NOT NULL
);
CREATE TABLE tool_set_members (
	set_hash    text NOT NULL REFERENCES tool_sets(hash) ON DELETE CASCADE,
	pos         integer NOT NULL,
	schema_hash text NOT NULL REFERENCES tool_schemas(hash),
	PRIMARY KEY (set_hash, pos)
);
CREATE INDEX tool_set_members_by_schema ON tool_set_members (schema_hash);
-- Every distinct system prompt, once.
CREATE TABLE system_prompts (
	hash  text PRIMARY KEY,
	text  bytea NOT NULL,
	bytes bigint NOT NULL
);
-- req_recorded is false for rounds stored without their request (Save);
-- req_system and req_tool_set are the hashes of its system prompt and
-- tool list, '' for none.
CREATE TABLE rounds (
	conv_id bytea NOT NULL,
	turn    integer NOT NULL,
	idx     integer NOT NULL,
	final   boolean NOT NULL DEFAULT false,
	input_tokens       bigint NOT NULL DEFAULT 0,
	cached_tokens      bigint NOT NULL DEFAULT 0,
	cache_write_tokens bigint NOT NULL DEFAULT 0,
	output_tokens      bigint NOT NULL DEFAULT 0,
	req_messages       bigint NOT NULL DEFAULT 0,
	req_evidence_chars bigint NOT NULL DEFAULT 0,
	req_tools          bigint NOT NULL DEFAULT 0,
	req_tool_bytes     bigint NOT NULL DEFAULT 0,
	req_recorded boolean NOT NULL DEFAULT false,
	req_system   text NOT NULL DEFAULT '',
	req_tool_set text NOT NULL DEFAULT '',
	PRIMARY KEY (conv_id, turn, idx),
	FOREIGN KEY (conv_id, turn) REFERENCES turns(conv_id, idx) ON DELETE CASCADE
);
CREATE INDEX rounds_by_system ON rounds (req_system) WHERE req_system <> '';
CREATE INDEX rounds_by_tool_set ON rounds (req_tool_set) WHERE req_tool_set <> '';
-- The assistant message of each round (user inputs are in turns).
CREATE TABLE messages (
	conv_id      bytea NOT NULL,
	turn         integer NOT NULL,
	round        integer NOT NULL,
	role         bytea NOT NULL,
	parts        bytea,
	tool_call_id bytea NOT NULL DEFAULT '',
	tool_name    bytea NOT NULL DEFAULT '',
	is_error     boolean NOT NULL DEFAULT false,
	PRIMARY KEY (conv_id, turn, round),
	FOREIGN KEY (conv_id, turn, round) REFERENCES rounds(conv_id, turn, idx) ON DELETE CASCADE
);
-- The calls of each assistant message; dropped for calls made while
-- tools were withheld (never run).
CREATE TABLE tool_calls (
	conv_id bytea NOT NULL,
	turn    integer NOT NULL,
	round   integer NOT NULL,
	dropped boolean NOT NULL,
	seq     integer NOT NULL,
	call_id bytea NOT NULL,
	name    bytea NOT NULL,
	args    bytea,
	PRIMARY KEY (conv_id, turn, round, dropped, seq),
	FOREIGN KEY (conv_id, turn, round) REFERENCES rounds(conv_id, turn, idx) ON DELETE CASCADE
);
-- One row per result: everything but the full payload. The model's copy,
-- when a guard changed it, is model_text (one text part) or model (JSON
-- parts); both NULL mean the full payload.
CREATE TABLE results (
	conv_id     bytea NOT NULL,
	turn        integer NOT NULL,
	round       integer NOT NULL,
	seq         integer NOT NULL,
	call_id     bytea NOT NULL,
	tool        bytea NOT NULL,
	is_error    boolean NOT NULL DEFAULT false,
	timed_out   boolean NOT NULL DEFAULT false,
	bytes       bigint NOT NULL,
	full_chars  bigint NOT NULL,
	model_bytes bigint NOT NULL,
	model_chars bigint NOT NULL,
	model_text  bytea,
	model       bytea,
	meta        bytea,
	marker      bytea NOT NULL DEFAULT '',
	PRIMARY KEY (conv_id, turn, round, seq),
	FOREIGN KEY (conv_id, turn, round) REFERENCES rounds(conv_id, turn, idx) ON DELETE CASCADE
);
CREATE INDEX results_by_call ON results (conv_id, call_id);
-- The full payloads, apart, so that listing and loading never read them
-- (PostgreSQL keeps a large value out of line, TOAST, and reads it only
-- when the column is selected).
CREATE TABLE result_bodies (
	conv_id    bytea NOT NULL,
	turn       integer NOT NULL,
	round      integer NOT NULL,
	seq        integer NOT NULL,
	text       bytea,
	parts      bytea,
	structured bytea,
	PRIMARY KEY (conv_id, turn, round, seq),
	FOREIGN KEY (conv_id, turn, round, seq) REFERENCES results(conv_id, turn, round, seq) ON DELETE CASCADE
);
-- The guards' cuts of each result's model copy, in order; refs is
-- codec.EncodeRefs' JSON (NULL for no list).
CREATE TABLE cuts (
	conv_id   bytea NOT NULL,
	turn      integer NOT NULL,
	round     integer NOT NULL,
	seq       integer NOT NULL,
	n         integer NOT NULL,
	kind      bytea NOT NULL,
	by        bytea NOT NULL DEFAULT '',
	bytes_in  bigint NOT NULL,
	bytes_out bigint NOT NULL,
	locator   bytea NOT NULL DEFAULT '',
	of        bytea NOT NULL DEFAULT '',
	refs      text,
	PRIMARY KEY (conv_id, turn, round, seq, n),
	FOREIGN KEY (conv_id, turn, round, seq) REFERENCES results(conv_id, turn, round, seq) ON DELETE CASCADE
);
CREATE TABLE notes (
	conv_id     bytea NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
	seq         integer NOT NULL,
	after       integer NOT NULL,
	text        bytea NOT NULL,
	by          bytea NOT NULL DEFAULT '',
	clear_turn  integer NOT NULL DEFAULT 0,
	clear_round integer NOT NULL DEFAULT 0,
	PRIMARY KEY (conv_id, seq)
);
-- Every event of a run, as JSON. No foreign key: an event sink may see a
-- conversation before (or without) the recorder.
CREATE TABLE events (
	id      bigserial PRIMARY KEY,
	conv_id bytea NOT NULL,
	turn    integer NOT NULL,
	round   integer NOT NULL,
	kind    bytea NOT NULL,
	time_ns bigint NOT NULL,
	body    bytea NOT NULL
);
CREATE INDEX events_by_conv ON events (conv_id, turn, id);
-- What per-turn policies did to a result in one request (view only).
CREATE TABLE view_cuts (
	id        bigserial PRIMARY KEY,
	conv_id   bytea NOT NULL,
	turn      integer NOT NULL,
	request   integer NOT NULL,
	call_id   bytea NOT NULL,
	kind      bytea NOT NULL,
	by        bytea NOT NULL DEFAULT '',
	bytes_in  bigint NOT NULL,
	bytes_out bigint NOT NULL,
	size_in   bigint NOT NULL DEFAULT 0,
	size_out  bigint NOT NULL DEFAULT 0,
	unit      bytea NOT NULL DEFAULT '',
	locator   bytea NOT NULL DEFAULT '',
	marker    bytea NOT NULL DEFAULT ''
);
CREATE INDEX view_cuts_by_call ON view_cuts (conv_id, turn, call_id);
`},
	{Version: 2, Name: "when each round was answered", SQL: `
-- harness.Round.Answered in Unix nanoseconds; 0 for rounds stored before
-- this version, which load with a zero time (View.Idle then falls back to
-- the turns' end times).
ALTER TABLE rounds ADD COLUMN answered_ns bigint NOT NULL DEFAULT 0;
`},
	{Version: 3, Name: "context messages of each turn", SQL: `
-- harness.Turn.Context: one row per message, seq in the turn's order;
-- after_input for a message the client sent after the turn's input.
-- Turns stored before this version have none: they load without context.
CREATE TABLE turn_context (
	conv_id     bytea NOT NULL,
	turn        integer NOT NULL,
	seq         integer NOT NULL,
	after_input boolean NOT NULL DEFAULT false,
	text        bytea NOT NULL,
	PRIMARY KEY (conv_id, turn, seq),
	FOREIGN KEY (conv_id, turn) REFERENCES turns (conv_id, idx) ON DELETE CASCADE
);
`},
	{Version: 4, Name: "event keys", SQL: `
-- The key the store's event queue gave each event (codec.Queued.Key),
-- stored with the event and with each of its view cuts (event_cut: its
-- position among them, from 0). A write retried after its COMMIT's reply
-- was lost brings the same keys, and the unique indexes drop those rows
-- (INSERT ... ON CONFLICT DO NOTHING). Rows stored before this version
-- have none (NULL), which the indexes leave out.
ALTER TABLE events ADD COLUMN event_key bytea;
CREATE UNIQUE INDEX events_by_key ON events (event_key) WHERE event_key IS NOT NULL;
ALTER TABLE view_cuts ADD COLUMN event_key bytea, ADD COLUMN event_cut integer;
CREATE UNIQUE INDEX view_cuts_by_key ON view_cuts (event_key, event_cut) WHERE event_key IS NOT NULL;
`},
	savingsMigration,
	{Version: 6, Name: "proxy replica claims", SQL: claimsSchema},
	recordsMigration,
	requestsMigration,
}

// schemaVersion is the schema version this package writes.
func schemaVersion() int { return migrate.Latest(migrations) }

// migrationLock is the advisory lock key every harness process takes to
// migrate, so two opening one new database at once apply each step once.
const migrationLock = 0x6861726e6573730 // "harness0"

// migrateTo brings the database up to version target (all migrations
// when target is 0), in one transaction under an advisory lock, and
// refuses a database written by a newer harness.
func migrateTo(ctx context.Context, pool *pgxpool.Pool, target int) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
			return fmt.Errorf("locking the schema: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    integer PRIMARY KEY,
	name       text NOT NULL,
	applied_ns bigint NOT NULL
)`); err != nil {
			return fmt.Errorf("creating schema_migrations: %w", err)
		}
		var newest int
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&newest); err != nil {
			return fmt.Errorf("reading the schema version: %w", err)
		}
		if err := migrate.CheckNewest(newest, migrations); err != nil {
			return err
		}
		exec := func(ctx context.Context, q string, args ...any) error {
			_, err := tx.Exec(ctx, q, args...)
			return err
		}
		for _, m := range migrate.Due(migrations, newest, target) {
			if err := migrate.Apply(ctx, exec, m); err != nil {
				return err
			}
		}
		return nil
	})
}
