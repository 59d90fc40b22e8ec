package postgres

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/agentharness/harness/internal/pgtest"
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
		Open: func(t testing.TB, opts *storetest.Options) storetest.Store {
			o := &Options{}
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
