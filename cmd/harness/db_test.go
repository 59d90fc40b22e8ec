package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/pgtest"
)

// pgServer is the throwaway PostgreSQL cluster of the --db postgres://
// tests (pgtest: skipped without PostgreSQL, failed when CI is set).
var pgServer pgtest.Server

// TestDBPostgres runs, resumes, lists, shows, audits, benches and deletes
// a conversation in a PostgreSQL store named by --db postgres://….
func TestDBPostgres(t *testing.T) {
	dsn := pgServer.DSN(t)
	ws := t.TempDir()
	turn1 := writeScript(t, `{"steps":[{"expect":{"turn":1,"round":1},"text":"hello from postgres"}]}`)
	_, stderr, code := inproc(t, "run", "--model", "scripted:"+turn1, "--workspace", ws, "--db", dsn, "say hello")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	m := regexp.MustCompile(`conversation (c_[0-9a-f]+) \(continue it with --conversation`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("run printed no conversation id: %s", stderr)
	}
	id := m[1]
	turn2 := writeScript(t, `{"steps":[{"expect":{"turn":2,"round":1,"contains":["say hello","hello from postgres","again"]},"text":"still here"}]}`)
	stdout, stderr, code := inproc(t, "run", "--model", "scripted:"+turn2, "--workspace", ws, "--db", dsn, "--conversation", id, "again")
	if code != 0 || strings.TrimSpace(stdout) != "still here" {
		t.Fatalf("resumed run: exit %d: %s %s", code, stdout, stderr)
	}
	stdout, stderr, code = inproc(t, "log", "list", "--db", dsn)
	if code != 0 || !regexp.MustCompile(id+`\s+\S+ \S+\s+2\s+2\s+0\s+.*say hello`).MatchString(stdout) {
		t.Fatalf("log list: exit %d:\n%s%s", code, stdout, stderr)
	}
	stdout, stderr, code = inproc(t, "log", "show", id, "--db", dsn)
	if code != 0 || !strings.Contains(stdout, "turn 2 ·") {
		t.Errorf("log show: exit %d:\n%s%s", code, stdout, stderr)
	}
	for _, cmd := range [][]string{{"audit", "--db", dsn}, {"bench", "--db", dsn, "--presets", "harness"}} {
		stdout, stderr, code = inproc(t, cmd...)
		if code != 0 || !strings.Contains(stdout+stderr, id) && !strings.Contains(stdout, "harness") {
			t.Errorf("%s: exit %d:\n%s%s", cmd[0], code, stdout, stderr)
		}
	}
	if _, stderr, code = inproc(t, "log", "delete", id, "--db", dsn, "--workspace", ws); code != 0 {
		t.Fatalf("log delete: exit %d: %s", code, stderr)
	}
	if stdout, _, _ = inproc(t, "log", "list", "--db", dsn); !strings.Contains(stdout, "no conversations in postgres://") {
		t.Errorf("log list after delete:\n%s", stdout)
	}
}

// TestDBPostgresNeverShowsThePassword: a DSN's password appears in no
// message, whether it does not parse or the server cannot be reached.
func TestDBPostgresNeverShowsThePassword(t *testing.T) {
	for _, dsn := range []string{
		"postgres://harness:s3cr3t-pw@127.0.0.1:1/nodb?connect_timeout=5",
		"postgres://harness:s3cr3t-pw@[::1/nodb",
		"postgres://harness:s3cr3t-pw@localhost:notaport/nodb",
		"postgresql://h:s3cr3t-pw@/db?sslmode=bogus&host=/tmp",
	} {
		stdout, stderr, code := inproc(t, "log", "list", "--db", dsn)
		if code == 0 || strings.Contains(stdout+stderr, "s3cr3t-pw") {
			t.Errorf("log list --db %s: exit %d, output shows the password:\n%s%s", dsn, code, stdout, stderr)
		}
	}
}

// TestPoolSize: the proxy's write pool is proxyWriteConns unless the
// database URL names pool_max_conns, which the store then reads itself.
func TestPoolSize(t *testing.T) {
	for _, tc := range []struct {
		dsn  string
		want int32
	}{
		{"postgres://u@h/db?sslmode=disable", proxyWriteConns},
		{"postgres://u@h/db", proxyWriteConns},
		{"postgres://u@h/db?sslmode=disable&pool_max_conns=40", 0},
		{"postgresql://u@h/db?pool_max_conns=2", 0},
	} {
		if got := poolSize(tc.dsn, proxyWriteConns); got != tc.want {
			t.Errorf("poolSize(%q) = %d, want %d", tc.dsn, got, tc.want)
		}
	}
}
