package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/codec"
)

// defaultMaxConns is the default size of a store's connection pool. Each
// turn in progress holds one connection until it ends.
const defaultMaxConns = 32

// readConns is the size of the second pool, which serves reads and the
// claim log (store.Claimer) only, so a process writing as many turns as
// its pool holds still reads and claims at once: a proxy claims on its
// requests' path and records off it.
const readConns = 8

// Options configure a store. Nil means defaults.
type Options struct {
	// MaxConns bounds the pool's connections (default: the connection
	// string's pool_max_conns, else 32): the turns this process records
	// at once, plus one for other writes. A turn that
	// finds the pool full waits for a connection (bounded by its context).
	// Reads and claims have 8 connections more of their own.
	MaxConns int32
	// WarmReads opens the pool for reads and claims in full when the
	// store opens, in the background, so a server's first requests do not
	// each wait for a new connection (a new PostgreSQL backend) on their
	// path; a short-lived command leaves it off and opens them as it reads.
	WarmReads bool
	// OnDelete is called by Delete inside its transaction, before the
	// deletion is committed, to remove what the conversation keeps outside
	// the database (its spill folder). An error aborts the deletion.
	OnDelete func(ctx context.Context, conversation string) error
	// OnEventError receives the error of an event that could not be
	// stored. Observers cannot fail a run; see also store.DB.EventErr.
	OnEventError func(e error)
}

// pgStore is the PostgreSQL transcript store. It is safe for concurrent use.
type pgStore struct {
	// pool serves writes, reads (and claims) the other one.
	pool, reads *pgxpool.Pool
	opts        Options
	addr        string

	// events holds events observed since the last write (see Observe);
	// emu orders their inserts, so ids follow the order observed.
	events codec.Events
	emu    sync.Mutex

	// turns holds the turns in progress, by conversation (see lock.go).
	tmu   sync.Mutex
	turns map[string]*turnLock

	// watch listens for the claim log's new entries (watch.go).
	watch watcher
}

var (
	_ store.DB           = (*pgStore)(nil)
	_ store.ClaimWatcher = (*pgStore)(nil)
)

// Open connects to the database dsn names (a postgres:// URL or a
// key=value string, as libpq takes them) and brings its schema up to date.
func Open(ctx context.Context, dsn string, opts *Options) (store.DB, error) {
	s, err := open(ctx, dsn, opts, 0)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return s, nil
}

func open(ctx context.Context, dsn string, opts *Options, version int) (*pgStore, error) {
	s := &pgStore{turns: map[string]*turnLock{}}
	if opts != nil {
		s.opts = *opts
	}
	s.events.OnError = s.opts.OnEventError
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, parseError(dsn, err)
	}
	switch {
	case s.opts.MaxConns > 0:
		cfg.MaxConns = s.opts.MaxConns
	case strings.Contains(dsn, "pool_max_conns"):
		s.opts.MaxConns = cfg.MaxConns // the connection string's
	default:
		s.opts.MaxConns, cfg.MaxConns = defaultMaxConns, defaultMaxConns
	}
	s.addr = address(cfg.ConnConfig.Config)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %s: %w", s.addr, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres store: connecting to %s: %w", s.addr, err)
	}
	if err := migrateTo(ctx, pool, version); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres store: %s: %w", s.addr, err)
	}
	rcfg := cfg.Copy()
	rcfg.MaxConns, rcfg.MinConns = readConns, min(rcfg.MinConns, readConns)
	if s.opts.WarmReads {
		rcfg.MinConns = readConns
	}
	reads, err := pgxpool.NewWithConfig(ctx, rcfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres store: %s: %w", s.addr, err)
	}
	s.pool, s.reads = pool, reads
	s.watch.cfg = cfg.ConnConfig.Copy()
	return s, nil
}

// parseError reports a connection string that does not parse without
// repeating it or its password.
func parseError(dsn string, err error) error {
	const msg = "postgres store: the connection string does not parse (not shown: it may hold a password)"
	var pe *pgconn.ParseConfigError
	if !errors.As(err, &pe) || pe.Unwrap() == nil {
		return errors.New(msg)
	}
	why := pe.Unwrap().Error()
	if strings.Contains(why, "://") || strings.Contains(why, "@") {
		return errors.New(msg) // it quotes the URL
	}
	for _, m := range passwordRE.FindAllStringSubmatch(dsn, -1) {
		for _, pw := range m[1:] {
			if pw != "" {
				why = strings.ReplaceAll(why, pw, "********")
			}
		}
	}
	return fmt.Errorf("%s: %s", msg, why)
}

// passwordRE finds the password of a URL (user:password@) or of a
// key=value string (password=…).
var passwordRE = regexp.MustCompile(`(?:://[^:/@]*:([^@]*)@|password\s*=\s*'?([^'\s]*))`)

// address names the database for messages, without the password.
func address(c pgconn.Config) string {
	host := c.Host
	if !strings.HasPrefix(host, "/") {
		host += ":" + strconv.Itoa(int(c.Port))
	}
	u := url.URL{Scheme: "postgres", User: url.User(c.User), Host: "", Path: "/" + c.Database}
	if strings.HasPrefix(host, "/") {
		u.RawQuery = url.Values{"host": {host}}.Encode()
	} else {
		u.Host = host
	}
	return u.String()
}

// Path names the database for messages: its address without the password.
func (s *pgStore) Path() string { return s.addr }

// Close writes the events still pending, ends the turns still in progress
// (their locks are released; their transcript stays as written) and closes
// the pool.
func (s *pgStore) Close() error {
	err := s.flush(context.Background())
	s.tmu.Lock()
	turns := s.turns
	s.turns = map[string]*turnLock{}
	s.tmu.Unlock()
	for _, l := range turns {
		l.release()
	}
	s.watch.stop()
	s.pool.Close()
	s.reads.Close()
	return err
}

// EventErr returns the first error met while storing an event, or nil.
func (s *pgStore) EventErr() error { return s.events.Err() }

// lockKey is the advisory lock key of a conversation: the first 8 bytes
// of a SHA-256 of its id. Two ids sharing a key (one chance in 2^64) would
// only make their turns wait for each other.
func lockKey(convID string) int64 {
	sum := sha256.Sum256([]byte("harness.conversation.v1\x00" + convID))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

// b passes a string as bytea, byte for byte ("" is an empty value, not
// NULL). pgx would otherwise send a Go string as text, which PostgreSQL
// parses as bytea's escape syntax.
func b(s string) []byte {
	out := make([]byte, len(s))
	copy(out, s)
	return out
}
