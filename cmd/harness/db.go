package main

import (
	"context"
	"fmt"
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
// must exist when mustExist. Deleting a conversation also removes its
// spill folder under workspace.
func openDB(ctx context.Context, p, workspace string, mustExist bool) (store.DB, error) {
	onDelete := func(ctx context.Context, id string) error { return spill.RemoveConversation(workspace, id) }
	if isDSN(p) {
		return postgres.Open(ctx, p, &postgres.Options{OnDelete: onDelete})
	}
	if mustExist {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("no transcript store at %s (\"harness run\" creates it): %w", p, err)
		}
	}
	return sqlite.Open(ctx, p, &sqlite.Options{OnDelete: onDelete})
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
