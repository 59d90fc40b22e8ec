package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

var server Server

func TestMain(m *testing.M) {
	code := m.Run()
	server.Stop()
	os.Exit(code)
}

// TestServer starts the cluster, gets two databases that do not see each
// other, and checks the server listens on no TCP port.
func TestServer(t *testing.T) {
	ctx := context.Background()
	a, b := server.DSN(t), server.DSN(t)
	if a == b {
		t.Fatal("two tests share one database")
	}
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	if _, err := ca.Exec(ctx, `CREATE TABLE only_in_a (x int)`); err != nil {
		t.Fatal(err)
	}
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	var n int
	if err := cb.QueryRow(ctx, `SELECT COUNT(*) FROM pg_tables WHERE tablename = 'only_in_a'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("database b sees a's table: %d, %v", n, err)
	}
	var listen, version string
	if err := ca.QueryRow(ctx, `SELECT current_setting('listen_addresses'), current_setting('server_version_num')`).Scan(&listen, &version); err != nil {
		t.Fatal(err)
	}
	if listen != "" {
		t.Errorf("listen_addresses = %q, want none (socket only)", listen)
	}
	t.Logf("PostgreSQL %s on %s", version, server.Socket())
}
