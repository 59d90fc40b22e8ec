package temporal

import (
	"context"
	"strings"

	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/postgres"
	"github.com/agentharness/harness/store/sqlite"
)

// IsDSN reports whether db names a PostgreSQL database (a postgres:// or
// postgresql:// URL) rather than an SQLite file, as harness's --db does.
func IsDSN(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// OpenStore opens the workers' transcript store at db, picked by its
// scheme: store/postgres for a postgres:// URL, else store/sqlite (the
// file is created if missing).
func OpenStore(ctx context.Context, db string) (store.DB, error) {
	if IsDSN(db) {
		return postgres.Open(ctx, db, nil)
	}
	return sqlite.Open(ctx, db, nil)
}

// OpenJournal opens the step journal at path, picked like OpenStore: a
// PostgresJournal for a postgres:// URL (its table sits beside the
// store's when it is the same database), else a SQLiteJournal file.
func OpenJournal(ctx context.Context, path string) (Journal, error) {
	if IsDSN(path) {
		j, err := OpenPostgresJournal(ctx, path)
		if err != nil {
			return nil, err
		}
		return j, nil
	}
	j, err := OpenSQLiteJournal(ctx, path)
	if err != nil {
		return nil, err
	}
	return j, nil
}
