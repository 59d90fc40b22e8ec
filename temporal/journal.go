package temporal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	// The pure-Go SQLite driver, registered as "sqlite" (the one
	// store/sqlite uses).
	_ "modernc.org/sqlite"
)

// Journal keeps what one step of a turn produced until the round it
// belongs to is stored: the model's reply (the round with its call ids)
// and each call's result. It is what makes a step idempotent: an
// activity retried after its worker died finds its own output and returns
// it instead of calling the model or the tool again. Entries are keyed by
// conversation, turn, round and a key ("model", "call:<id>", "begin:<run>", "tools:<run>").
// Implementations are safe for concurrent use by many processes.
type Journal interface {
	// Put stores value under the key unless an entry is already there, and
	// returns the entry that is stored: the first writer wins, so two
	// workers racing on one step agree on its output.
	Put(ctx context.Context, k Key, value []byte) ([]byte, error)
	// Get returns the entry under k; ok is false when there is none.
	Get(ctx context.Context, k Key) (value []byte, ok bool, err error)
	// DeleteTurn removes every entry of a turn (its rounds are stored).
	DeleteTurn(ctx context.Context, conv string, turn int) error
	// Close releases the journal.
	Close() error
}

// Key locates one journal entry.
type Key struct {
	Conversation string
	Turn, Round  int
	Name         string
}

// SQLiteJournal is a Journal in a SQLite file. Its writes are durable
// (WAL, synchronous=FULL) before Put returns, since a step reports its
// output only after Put.
type SQLiteJournal struct {
	db *sql.DB
}

// OpenSQLiteJournal opens (creating if needed) the journal in the SQLite
// file at path. Worker processes on one machine may share the file.
func OpenSQLiteJournal(ctx context.Context, path string) (*SQLiteJournal, error) {
	if path == "" {
		return nil, errors.New("temporal journal: no path")
	}
	busy := (30 * time.Second).Milliseconds()
	db, err := sql.Open("sqlite", fmt.Sprintf("file:%s?_busy_timeout=%d&_journal_mode=WAL&_synchronous=FULL&_txlock=immediate", path, busy))
	if err != nil {
		return nil, fmt.Errorf("temporal journal: %w", err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS journal (
	conv_id TEXT NOT NULL, turn INTEGER NOT NULL, round INTEGER NOT NULL, name TEXT NOT NULL,
	value BLOB NOT NULL, PRIMARY KEY (conv_id, turn, round, name))`); err != nil {
		db.Close()
		return nil, fmt.Errorf("temporal journal: opening %s: %w", path, err)
	}
	return &SQLiteJournal{db: db}, nil
}

// Put implements Journal.
func (j *SQLiteJournal) Put(ctx context.Context, k Key, value []byte) ([]byte, error) {
	if _, err := j.db.ExecContext(ctx, `INSERT INTO journal (conv_id, turn, round, name, value) VALUES (?, ?, ?, ?, ?)
ON CONFLICT DO NOTHING`, k.Conversation, k.Turn, k.Round, k.Name, value); err != nil {
		return nil, fmt.Errorf("temporal journal: %s: %w", k, err)
	}
	v, ok, err := j.Get(ctx, k)
	if err == nil && !ok {
		err = fmt.Errorf("temporal journal: %s vanished after it was written", k)
	}
	return v, err
}

// Get implements Journal.
func (j *SQLiteJournal) Get(ctx context.Context, k Key) ([]byte, bool, error) {
	var v []byte
	err := j.db.QueryRowContext(ctx, `SELECT value FROM journal WHERE conv_id = ? AND turn = ? AND round = ? AND name = ?`,
		k.Conversation, k.Turn, k.Round, k.Name).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("temporal journal: %s: %w", k, err)
	}
	return v, true, nil
}

// DeleteTurn implements Journal.
func (j *SQLiteJournal) DeleteTurn(ctx context.Context, conv string, turn int) error {
	if _, err := j.db.ExecContext(ctx, `DELETE FROM journal WHERE conv_id = ? AND turn = ?`, conv, turn); err != nil {
		return fmt.Errorf("temporal journal: turn %d of %s: %w", turn, conv, err)
	}
	return nil
}

// Close implements Journal.
func (j *SQLiteJournal) Close() error { return j.db.Close() }

// String names the key in errors.
func (k Key) String() string {
	return fmt.Sprintf("%s turn %d round %d %s", k.Conversation, k.Turn, k.Round, k.Name)
}
