package temporal

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PostgresJournal is a Journal in a PostgreSQL database, normally the one
// the workers' store/postgres transcript lives in (its own table,
// harness_journal, beside the store's). Put is one INSERT … ON CONFLICT DO
// NOTHING that returns the stored row, committed before Put returns, so
// the first writer wins across every worker machine, as with
// SQLiteJournal on one machine.
type PostgresJournal struct {
	pool *pgxpool.Pool
}

// OpenPostgresJournal connects to the database dsn names (a postgres://
// URL or a libpq key=value string) and creates the journal's table if it
// is missing.
func OpenPostgresJournal(ctx context.Context, dsn string) (*PostgresJournal, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgconn redacts the password from a parse error.
		return nil, fmt.Errorf("temporal journal: %w", err)
	}
	where := cfg.ConnConfig.Host + "/" + cfg.ConnConfig.Database
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("temporal journal: %s: %w", where, err)
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS harness_journal (
	conv_id TEXT NOT NULL, turn INTEGER NOT NULL, round INTEGER NOT NULL, name TEXT NOT NULL,
	value BYTEA NOT NULL, PRIMARY KEY (conv_id, turn, round, name))`); err != nil {
		pool.Close()
		return nil, fmt.Errorf("temporal journal: opening %s: %w", where, err)
	}
	return &PostgresJournal{pool: pool}, nil
}

// Put implements Journal. The INSERT returns nothing when a row was there
// already (another writer won); the stored value is then read back. The
// row cannot vanish in between except through DeleteTurn, which runs only
// after the turn has ended.
func (j *PostgresJournal) Put(ctx context.Context, k Key, value []byte) ([]byte, error) {
	var v []byte
	err := j.pool.QueryRow(ctx, `INSERT INTO harness_journal (conv_id, turn, round, name, value) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT DO NOTHING RETURNING value`, k.Conversation, k.Turn, k.Round, k.Name, value).Scan(&v)
	switch {
	case err == nil:
		return v, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return nil, fmt.Errorf("temporal journal: %s: %w", k, err)
	}
	v, ok, err := j.Get(ctx, k)
	if err == nil && !ok {
		err = fmt.Errorf("temporal journal: %s vanished after it was written", k)
	}
	return v, err
}

// Get implements Journal.
func (j *PostgresJournal) Get(ctx context.Context, k Key) ([]byte, bool, error) {
	var v []byte
	err := j.pool.QueryRow(ctx, `SELECT value FROM harness_journal WHERE conv_id = $1 AND turn = $2 AND round = $3 AND name = $4`,
		k.Conversation, k.Turn, k.Round, k.Name).Scan(&v)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("temporal journal: %s: %w", k, err)
	}
	return v, true, nil
}

// DeleteTurn implements Journal.
func (j *PostgresJournal) DeleteTurn(ctx context.Context, conv string, turn int) error {
	if _, err := j.pool.Exec(ctx, `DELETE FROM harness_journal WHERE conv_id = $1 AND turn = $2`, conv, turn); err != nil {
		return fmt.Errorf("temporal journal: turn %d of %s: %w", turn, conv, err)
	}
	return nil
}

// Close implements Journal.
func (j *PostgresJournal) Close() error {
	j.pool.Close()
	return nil
}
