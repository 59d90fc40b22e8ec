package postgres

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentharness/harness/internal/pgtest"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/storetest"
)

// server is the throwaway PostgreSQL cluster of this package's tests
// (pgtest: skipped without PostgreSQL, failed when CI is set).
var server pgtest.Server

func TestMain(m *testing.M) {
	code := m.Run()
	server.Stop()
	os.Exit(code)
}

// backend is a fresh database for the conformance suite.
func backend(t testing.TB) *storetest.Backend {
	dsn := server.DSN(t)
	return &storetest.Backend{
		Open: func(t testing.TB, opts *storetest.Options) store.DB {
			o := &Options{OnEventError: func(err error) { t.Errorf("storing an event: %v", err) }}
			if opts != nil {
				o.OnDelete = opts.OnDelete
			}
			s, err := Open(context.Background(), dsn, o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		Count:     func(t testing.TB, table, conv string) int { return count(t, dsn, table, conv) },
		TurnLocks: true,
		Crash:     func(t testing.TB, s store.DB) { crash(t, dsn, s.(*pgStore)) },
	}
}

// crash ends the sessions of s's turns on the server without unlocking,
// as the death of its process does, and waits until the server has ended
// them (and so released their locks).
func crash(t testing.TB, dsn string, s *pgStore) {
	t.Helper()
	s.tmu.Lock()
	turns := s.turns
	s.turns = map[string]*turnLock{}
	s.tmu.Unlock()
	for _, l := range turns {
		pid := l.conn.Conn().PgConn().PID()
		_ = l.conn.Hijack().Close(context.Background())
		ctx := context.Background()
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		for gone := false; !gone; {
			var n int
			if err := c.QueryRow(ctx, `SELECT COUNT(*) FROM pg_stat_activity WHERE pid = $1`, int32(pid)).Scan(&n); err != nil {
				t.Fatal(err)
			}
			gone = n == 0
			if !gone {
				time.Sleep(10 * time.Millisecond) // the server ends the session by itself; a hang fails by -timeout
			}
		}
		c.Close(ctx)
	}
}

// count returns the rows of table (of conversation conv when not "").
func count(t testing.TB, dsn, table, conv string) int {
	t.Helper()
	c := connect(t, dsn)
	defer c.Close(context.Background())
	q, args := `SELECT COUNT(*) FROM `+pgx.Identifier{table}.Sanitize(), []any{}
	if conv != "" {
		q, args = q+` WHERE conv_id = $1`, []any{[]byte(conv)}
	}
	var n int
	if err := c.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestConformance runs the transcript stores' conformance suite on a real
// PostgreSQL server.
func TestConformance(t *testing.T) { storetest.Run(t, backend) }

// BenchmarkAppend is storetest.Bench on PostgreSQL (compare store/sqlite's).
func BenchmarkAppend(b *testing.B) { storetest.Bench(b, backend) }
