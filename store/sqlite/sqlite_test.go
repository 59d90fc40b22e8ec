package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func openTemp(t testing.TB, opts *Options) *sqliteStore {
	t.Helper()
	s, err := open(context.Background(), filepath.Join(t.TempDir(), "sub", "harness.db"), opts, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Open(ctx, "", nil); err == nil {
		t.Error("empty path accepted")
	}
	if _, err := Open(ctx, filepath.Join(t.TempDir(), "a?b.db"), nil); err == nil {
		t.Error("path with ? accepted")
	}
	notDB := filepath.Join(t.TempDir(), "not.db")
	if err := os.WriteFile(notDB, []byte(strings.Repeat("this is not a database\n", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, notDB, nil); err == nil {
		t.Error("a text file opened as a database")
	}
}

func TestFileIsPrivate(t *testing.T) {
	s := openTemp(t, nil)
	st, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if m := st.Mode().Perm(); m != 0o600 {
		t.Errorf("database mode %v, want 0600 (transcripts hold whatever tools read)", m)
	}
	dir, _ := os.Stat(filepath.Dir(s.Path()))
	if m := dir.Mode().Perm(); m != 0o700 {
		t.Errorf("directory mode %v, want 0700", m)
	}
}
