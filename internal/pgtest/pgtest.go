// Package pgtest starts a throwaway PostgreSQL cluster for tests: initdb
// into a temporary folder, pg_ctl start listening only on a unix socket in
// that folder (no TCP port), as a non-root user, stopped and removed by
// Stop. Each test gets a fresh database of its own (Server.DSN).
//
// The binaries are Debian's postgresql package (/usr/lib/postgresql/N/bin,
// or PATH, or $PGTEST_BIN). Without them a test skips with a message that
// says how to install them, except when the CI environment variable is
// set: CI must not skip silently, so the test fails.
//
// When the tests run as root (which initdb refuses), the server binaries
// run through runuser as the "postgres" user the package creates, with the
// temporary folder given to that user.
package pgtest

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// User is the superuser of the throwaway cluster; it connects over the
// socket without a password (trust, only the socket's folder reaches it).
const User = "harness"

// Server is a throwaway cluster, started on first use. The zero value is
// ready; call Stop when the tests are done (TestMain).
type Server struct {
	once sync.Once
	err  error
	dir  string // the temporary folder: data/, the socket and the log
	bin  string
	as   string // the user the server runs as, "" for the current one

	mu sync.Mutex
	n  int // databases created
}

// DSN returns the URL of a new, empty database on the cluster, starting
// the cluster on first use. It skips t when PostgreSQL is not installed
// (fails when CI is set) and fails it when the cluster cannot start.
func (s *Server) DSN(t testing.TB) string {
	t.Helper()
	s.once.Do(func() { s.err = s.start() })
	if s.err != nil {
		if _, missing := s.err.(missingError); missing {
			if os.Getenv("CI") != "" {
				t.Fatalf("pgtest: %v (CI is set: a test that needs PostgreSQL must not skip)", s.err)
			}
			t.Skipf("pgtest: %v", s.err)
		}
		t.Fatalf("pgtest: %v", s.err)
	}
	s.mu.Lock()
	s.n++
	name := fmt.Sprintf("t%03d_%s", s.n, sanitize(t.Name()))
	s.mu.Unlock()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.url("postgres"))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("pgtest: creating database %s: %v", name, err)
	}
	return s.url(name)
}

// Socket is the folder of the cluster's unix socket ("" before start).
func (s *Server) Socket() string { return s.dir }

// Stop stops the cluster (immediate shutdown: its data is thrown away)
// and removes its folder. It is safe to call when it never started.
func (s *Server) Stop() {
	if s.dir == "" {
		return
	}
	_ = s.ctl("stop", "-m", "immediate")
	os.RemoveAll(s.dir)
	s.dir = ""
}

// Restart stops the cluster (fast shutdown, so open connections break) and
// starts it again on the same socket with the same data.
func (s *Server) Restart() error {
	if err := s.ctl("stop", "-m", "fast"); err != nil {
		return err
	}
	return s.ctl("start")
}

func (s *Server) url(db string) string {
	u := url.URL{Scheme: "postgres", User: url.User(User), Path: "/" + db,
		RawQuery: url.Values{"host": {s.dir}, "sslmode": {"disable"}}.Encode()}
	return u.String()
}

// missingError says PostgreSQL is not installed.
type missingError struct{ msg string }

func (e missingError) Error() string { return e.msg }

func (s *Server) start() error {
	bin, err := findBin()
	if err != nil {
		return err
	}
	s.bin = bin
	if os.Geteuid() == 0 {
		if _, err := user.Lookup("postgres"); err != nil {
			return fmt.Errorf("running as root, and there is no postgres user to run the server as: %w", err)
		}
		s.as = "postgres"
	}
	// A short path: a unix socket's path is limited to about 100 bytes.
	dir, err := os.MkdirTemp("", "pgtest")
	if err != nil {
		return err
	}
	s.dir = dir
	if s.as != "" {
		if err := exec.Command("chown", s.as, dir).Run(); err != nil {
			return fmt.Errorf("giving %s to %s: %w", dir, s.as, err)
		}
	}
	if out, err := s.run("initdb", "-D", filepath.Join(dir, "data"), "-U", User, "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"); err != nil {
		s.Stop()
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	if err := s.ctl("start"); err != nil {
		s.Stop()
		return err
	}
	return nil
}

// ctl runs pg_ctl action on the cluster; start waits until it accepts
// connections.
func (s *Server) ctl(action string, args ...string) error {
	full := append([]string{action, "-D", filepath.Join(s.dir, "data"), "-w", "-t", "120"}, args...)
	if action == "start" {
		// Only the socket in the folder: no TCP port, no other socket.
		// synchronous_commit=off is as durable as the SQLite store's
		// WAL with synchronous=NORMAL: the last commits may be lost on a
		// crash, nothing is ever half-written.
		full = append(full, "-l", filepath.Join(s.dir, "log"),
			"-o", "-k "+s.dir+" -c listen_addresses= -c synchronous_commit=off -c max_connections=200")
	}
	if out, err := s.run("pg_ctl", full...); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		return fmt.Errorf("pg_ctl %s: %w\n%s\n%s", action, err, out, log)
	}
	return nil
}

func (s *Server) run(name string, args ...string) ([]byte, error) {
	path := filepath.Join(s.bin, name)
	var cmd *exec.Cmd
	if s.as != "" {
		cmd = exec.Command("runuser", append([]string{"-u", s.as, "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Dir = s.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.Bytes(), err
	case <-time.After(5 * time.Minute): // a hang, not a slow machine
		_ = cmd.Process.Kill()
		return out.Bytes(), fmt.Errorf("%s did not finish in 5 minutes", name)
	}
}

// findBin returns the folder of initdb and pg_ctl: $PGTEST_BIN, the newest
// /usr/lib/postgresql/N/bin, or the folder on PATH.
func findBin() (string, error) {
	if b := os.Getenv("PGTEST_BIN"); b != "" {
		return b, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", missingError{"PostgreSQL is not installed (no initdb in /usr/lib/postgresql/*/bin or on PATH): apt-get install postgresql"}
}

// version is the major version of a /usr/lib/postgresql/N/bin folder.
func version(dir string) int {
	var n int
	fmt.Sscanf(filepath.Base(filepath.Dir(dir)), "%d", &n)
	return n
}

// sanitize makes a test name a short database name.
func sanitize(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= 40 {
			break
		}
	}
	return b.String()
}
