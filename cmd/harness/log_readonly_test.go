package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store/sqlite"
)

// TestLogReadOnlyStore: "log list" and "log show" read a store without
// writing a byte of it, and read one in a folder the user may not write
// (that part skipped for root, whom permissions do not stop; the store's
// own TestReadOnly covers the read-only open as root).
func TestLogReadOnlyStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "harness.db")
	st, err := sqlite.Open(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("ro-1")
	turn := &harness.Turn{Index: 1, Input: "hello there"}
	if err := st.BeginTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	turn.Outcome = harness.Answered
	if err := st.EndTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	st.Close()
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		if out, errs, code := inproc(t, "log", "list", "--db", db); code != 0 || !strings.Contains(out, "ro-1") {
			t.Errorf("%s: log list: exit %d: %s%s", when, code, out, errs)
		}
		if out, errs, code := inproc(t, "log", "show", "ro-1", "--db", db); code != 0 || !strings.Contains(out, "hello there") {
			t.Errorf("%s: log show: exit %d: %s%s", when, code, out, errs)
		}
		if after, err := os.ReadFile(db); err != nil || !bytes.Equal(before, after) {
			t.Errorf("%s: reading the store changed it (%v)", when, err)
		}
	}
	check("writable folder")
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	if f, err := os.Create(filepath.Join(dir, "probe")); err == nil {
		f.Close()
		t.Skip("the folder stays writable (running as root)")
	}
	check("read-only folder")
}
