package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/codec"

	// The pure-Go SQLite driver, registered as "sqlite".
	_ "modernc.org/sqlite"
)

// defaultBusyTimeout is how long a write waits for another process holding
// the database's write lock.
const defaultBusyTimeout = 10 * time.Second

// Options configure a store. Nil means defaults.
type Options struct {
	// BusyTimeout bounds the wait for another process's write lock
	// (default 10 s).
	BusyTimeout time.Duration
	// OnDelete is called by Delete inside its transaction, before the
	// deletion is committed, to remove what the conversation keeps outside
	// the database (its spill folder .harness/spill/<id>/). An error
	// aborts the deletion.
	OnDelete func(ctx context.Context, conversation string) error
	// OnEventError receives the error of an event that could not be
	// stored. Observers cannot fail a run; see also store.DB.EventErr.
	OnEventError func(e error)
	// ChunkBytes is the size above which a result's payload is stored in
	// chunks of this size (default defaultChunkBytes, at most 512 MiB):
	// SQLite cannot hold a value over 1 GB, and a round must be stored
	// whatever its results weigh.
	ChunkBytes int
	// LeaseTTL is how long a turn's claim on its conversation lasts
	// without a write (default defaultLeaseTTL). Every write of the turn
	// renews it; see BeginTurn.
	LeaseTTL time.Duration
	// ReadOnly opens an existing store for reading only, as a store on a
	// read-only file system or in a folder the process may not write
	// must be: nothing is created or migrated (a store with an older
	// schema is refused with ErrOutdated), and every write fails.
	ReadOnly bool
}

// sqliteStore is the SQLite transcript store. It is safe for concurrent
// use.
type sqliteStore struct {
	path string
	opts Options
	// w is the one writing connection; r a pool of read-only connections.
	w, r *sql.DB

	owner   leaseOwner  // who this Store is, in the leases table
	claimed atomic.Bool // it has claimed a conversation (Close releases)

	// turns holds the turn in progress of each conversation this Store
	// began or resumed (see hold).
	tmu   sync.Mutex
	turns map[string]*hold

	// events holds events observed since the last write (see Observe).
	events codec.Events

	// requests holds what each request in flight offers, until AddRound
	// stores it with its round (see AddRequest).
	requests codec.Pending

	// immutable makes a ReadOnly open take the path it takes when SQLite
	// cannot open the file read-only (tests, which may run as root).
	immutable bool
}

var _ store.DB = (*sqliteStore)(nil)

// Open opens (creating it if needed, with its directory) the store at
// path and brings its schema up to date.
func Open(ctx context.Context, path string, opts *Options) (store.DB, error) {
	s, err := open(ctx, path, opts, 0)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return s, nil
}

func open(ctx context.Context, path string, opts *Options, version int) (*sqliteStore, error) {
	return openStore(ctx, &sqliteStore{path: path, owner: newLeaseOwner()}, opts, version)
}

// openStore opens s, whose path and owner are set.
func openStore(ctx context.Context, s *sqliteStore, opts *Options, version int) (*sqliteStore, error) {
	path := s.path
	if opts != nil {
		s.opts = *opts
	}
	s.events.OnError = s.opts.OnEventError
	if s.opts.BusyTimeout <= 0 {
		s.opts.BusyTimeout = defaultBusyTimeout
	}
	if s.opts.ChunkBytes <= 0 || s.opts.ChunkBytes > 512<<20 {
		s.opts.ChunkBytes = defaultChunkBytes
	}
	if s.opts.LeaseTTL <= 0 {
		s.opts.LeaseTTL = defaultLeaseTTL
	}
	if path == "" {
		return nil, errors.New("sqlite store: empty path")
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("sqlite store: path %q: '?' and '#' are not supported in a database path", path)
	}
	if s.opts.ReadOnly {
		if err := s.openReadOnly(ctx); err != nil {
			return nil, err
		}
		return s, nil
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("sqlite store: %w", err)
		}
	}
	// Transcripts hold whatever tools read: the file is private to its
	// owner (SQLite gives its -wal and -shm files the same mode).
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	} else if !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	busy := fmt.Sprintf("_busy_timeout=%d", s.opts.BusyTimeout.Milliseconds())
	// The writer takes the write lock when a transaction begins
	// (immediate), so a transaction never fails halfway upgrading a read
	// lock; synchronous=NORMAL is durable in WAL mode except for the last
	// transactions on power loss, never corrupt.
	w, err := sql.Open("sqlite", "file:"+path+"?"+busy+"&_journal_mode=WAL&_synchronous=NORMAL&_foreign_keys=1&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite store: opening %s: %w", path, err)
	}
	if err := migrateTo(ctx, w, version); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite store: %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", "file:"+path+"?"+busy+"&_query_only=1&_foreign_keys=1")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	r.SetMaxOpenConns(4)
	s.w, s.r = w, r
	return s, nil
}

// Path returns the database file's path.
func (s *sqliteStore) Path() string { return s.path }

// Close writes the events still pending, releases the conversations this
// Store holds (a turn it began and never ended) and closes the database.
func (s *sqliteStore) Close() error {
	return errors.Join(s.flush(context.Background()), s.releaseAll(), s.r.Close(), s.w.Close())
}

// EventErr returns the first error met while storing an event, or nil.
func (s *sqliteStore) EventErr() error { return s.events.Err() }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
