package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/storetest"
)

// backend is a fresh database file for the conformance suite.
func backend(t testing.TB) *storetest.Backend {
	path := filepath.Join(t.TempDir(), "harness.db")
	return &storetest.Backend{
		Open: func(t testing.TB, opts *storetest.Options) store.DB {
			o := &Options{OnEventError: func(err error) { t.Errorf("storing an event: %v", err) }}
			if opts != nil {
				o.OnDelete, o.ChunkBytes = opts.OnDelete, opts.ChunkBytes
			}
			s, err := Open(context.Background(), path, o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		TurnLocks: true,
		Chunks:    true,
		// A process killed mid-turn leaves its lease; here it is expired
		// rather than left to a dead pid, which the suite cannot make.
		Crash: func(t testing.TB, s store.DB) {
			st := s.(*sqliteStore)
			if _, err := st.w.Exec(`UPDATE leases SET expires_ns = 0 WHERE owner = ?`, st.owner.id); err != nil {
				t.Fatal(err)
			}
		},
		Count: func(t testing.TB, table, conv string) int {
			t.Helper()
			db, err := sql.Open("sqlite", "file:"+path+"?_query_only=1")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			q, args := `SELECT COUNT(*) FROM `+table, []any{}
			if conv != "" {
				q, args = q+` WHERE conv_id = ?`, []any{conv}
			}
			var n int
			if err := db.QueryRow(q, args...).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		},
	}
}

// TestConformance runs the transcript stores' conformance suite.
func TestConformance(t *testing.T) { storetest.Run(t, backend) }

// BenchmarkAppend is storetest.Bench on SQLite (compare store/postgres's).
func BenchmarkAppend(b *testing.B) { storetest.Bench(b, backend) }
