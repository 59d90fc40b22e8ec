package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"

	"github.com/agentharness/harness/store/internal/migrate"
)

// ErrOutdated is returned by Open with Options.ReadOnly when the store's
// schema is older than this harness writes: it must be opened writable
// once to be brought up to date.
var ErrOutdated = errors.New("sqlite store: the schema is older than this harness reads without migrating")

// openReadOnly opens the store at s.path for reading only (Options.ReadOnly):
// nothing is created or migrated, and every write fails. SQLite opens the
// file read-only; when it cannot (a WAL-mode file in a folder it may not
// create the -shm file in, as on a read-only file system) and no -wal
// file holds uncheckpointed writes, it opens it immutable.
func (s *sqliteStore) openReadOnly(ctx context.Context) error {
	if _, err := os.Stat(s.path); err != nil {
		return fmt.Errorf("sqlite store: %w", err)
	}
	busy := fmt.Sprintf("_busy_timeout=%d", s.opts.BusyTimeout.Milliseconds())
	dsn := "file:" + s.path + "?mode=ro&" + busy + "&_query_only=1"
	var db *sql.DB
	err := errors.New("immutable: forced")
	if !s.immutable {
		db, err = openRO(ctx, dsn)
	}
	if err != nil {
		if fi, werr := os.Stat(s.path + "-wal"); werr == nil && fi.Size() > 0 {
			return fmt.Errorf("sqlite store: opening %s read-only: %w", s.path, err)
		}
		dsn = "file:" + s.path + "?mode=ro&immutable=1&_query_only=1"
		if db, err = openRO(ctx, dsn); err != nil {
			return fmt.Errorf("sqlite store: opening %s read-only: %w", s.path, err)
		}
	}
	var newest int
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&newest); err != nil {
		db.Close()
		return fmt.Errorf("sqlite store: %s: reading the schema version: %w", s.path, err)
	}
	if err := migrate.CheckNewest(newest, migrations); err != nil {
		db.Close()
		return fmt.Errorf("sqlite store: %s: %w", s.path, err)
	}
	if newest < migrate.Latest(migrations) {
		db.Close()
		return fmt.Errorf("%w (%s has version %d, want %d)", ErrOutdated, s.path, newest, migrate.Latest(migrations))
	}
	// The writer is a read-only connection too: a write fails with
	// SQLite's own "readonly database" error.
	w, err := openRO(ctx, dsn)
	if err != nil {
		db.Close()
		return fmt.Errorf("sqlite store: %w", err)
	}
	w.SetMaxOpenConns(1)
	db.SetMaxOpenConns(4)
	s.w, s.r = w, db
	return nil
}

// openRO opens dsn and reads from it, so a file SQLite cannot open fails
// here rather than at the first query.
func openRO(ctx context.Context, dsn string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}
