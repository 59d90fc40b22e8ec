package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"

	"github.com/agentharness/harness/replay"
	"github.com/agentharness/harness/spill"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/postgres"
	"github.com/agentharness/harness/store/sqlite"
)

// isDSN reports whether --db names a PostgreSQL database rather than a
// file: a postgres:// or postgresql:// URL.
func isDSN(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// openDB opens the transcript store at p, picked by its scheme: a
// PostgreSQL database for a postgres:// URL, else an SQLite file, which
// must exist when mustExist. For a proxy (serving), a PostgreSQL store
// has a write pool of proxyWriteConns connections unless the URL sets
// pool_max_conns, and its pool for reads and claims open from the start.
// Deleting a conversation also removes its spill folder under workspace.
func openDB(ctx context.Context, p, workspace string, mustExist, serving bool) (store.DB, error) {
	onDelete := func(ctx context.Context, id string) error { return spill.RemoveConversation(workspace, id) }
	if isDSN(p) {
		opts := &postgres.Options{OnDelete: onDelete}
		if serving {
			opts.MaxConns, opts.WarmReads = poolSize(p, proxyWriteConns), true
		}
		return postgres.Open(ctx, p, opts)
	}
	if mustExist {
		if _, err := os.Stat(p); err != nil {
			return nil, missingStore(p, err)
		}
	}
	return sqlite.Open(ctx, p, &sqlite.Options{OnDelete: onDelete})
}

// poolSize is the write pool openDB asks of the PostgreSQL store at dsn:
// conns, unless the URL names its own size (0: the store decides).
func poolSize(dsn string, conns int32) int32 {
	if u, err := url.Parse(dsn); err == nil && u.Query().Has("pool_max_conns") {
		return 0
	}
	return conns
}

// proxyWriteConns is the proxy's write pool on PostgreSQL. Its recorder
// holds a connection only while it writes (a turn is suspended between
// writes), and a database on few cores spends more per statement with
// every connection open: eight serve hundreds of writes a second, and
// a replica then opens 17 connections in all (docs/gateway.md).
const proxyWriteConns = 8

// missingStore is the error for a store file that cannot be opened to
// read: where it was looked for, and, when it is not there, what creates
// it and how to name another.
func missingStore(p string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no transcript store at %s: harness proxy, harness claude, codex, gemini or opencode, and harness run create it "+
			"in the folder they run from; run this there, or name it with --workspace DIR or --db FILE", p)
	}
	return fmt.Errorf("transcript store %s: %w", p, err)
}

// dbRecordings imports the conversations of the store --db names for
// audit and bench: a file is imported like a positional one; a PostgreSQL
// database is read conversation by conversation.
func dbRecordings(ctx context.Context, db string) ([]*replay.Recording, error) {
	if !isDSN(db) {
		recs, _, err := replay.LoadWith(ctx, nil, db)
		return recs, err
	}
	st, err := postgres.Open(ctx, db, nil)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	recs, err := replay.ReadStore(ctx, st, st.Path(), "")
	return recs, err
}
