package sqlite

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentharness/harness"
)

// TestReadOnly: a store opened ReadOnly reads what was stored, changes no
// byte of the file, and refuses writes, both as SQLite opens it read-only
// and as it opens it where it cannot (immutable: then it creates nothing
// beside the file, no -wal, no -shm, so it works where nothing may be
// written; forced here, as the test may run as root, whom permissions
// would not stop). A missing store is an error, its folder not created.
func TestReadOnly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "harness.db")
	st, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("c1")
	turn := &harness.Turn{Index: 1, Input: "hello"}
	if err := st.BeginTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	round := &harness.Round{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("hi")}}}
	if err := st.AddRound(ctx, conv, turn, round); err != nil {
		t.Fatal(err)
	}
	turn.Outcome = harness.Answered
	if err := st.EndTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	entries := func() int {
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	n := entries()

	for _, immutable := range []bool{true, false} {
		ro, err := openStore(ctx, &sqliteStore{path: path, owner: newLeaseOwner(), immutable: immutable}, &Options{ReadOnly: true}, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkReadOnly(t, ro)
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(before, after) {
			t.Errorf("immutable %v: opening read-only changed the file", immutable)
		}
		if immutable && entries() != n {
			t.Errorf("immutable: opening read-only created files (%d entries, were %d)", entries(), n)
		}
	}
	if _, err := Open(ctx, filepath.Join(dir, "none", "h.db"), &Options{ReadOnly: true}); err == nil {
		t.Error("a missing store opened read-only")
	}
	if _, err := os.Stat(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Error("opening a missing store read-only created its folder")
	}
}

// checkReadOnly checks that ro reads the conversation TestReadOnly stored
// and refuses a write, and closes it.
func checkReadOnly(t *testing.T, ro *sqliteStore) {
	t.Helper()
	ctx := context.Background()
	list, err := ro.List(ctx)
	if err != nil || len(list) != 1 || list[0].ID != "c1" {
		t.Fatalf("List: %+v, %v", list, err)
	}
	got, err := ro.Load(ctx, "c1")
	if err != nil || len(got.Turns) != 1 || got.Turns[0].Input != "hello" {
		t.Fatalf("Load: %+v, %v", got, err)
	}
	if err := ro.BeginTurn(ctx, harness.NewConversation("c2"), &harness.Turn{Index: 1, Input: "x"}); err == nil {
		t.Error("a read-only store began a turn")
	}
	if err := ro.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// TestReadOnlyFolder: in a folder the process may not write (skipped
// for root, whom permissions do not stop: TestReadOnly covers it), a
// store opens read-only where it cannot open writable.
func TestReadOnlyFolder(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "harness.db")
	st, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	if f, err := os.Create(filepath.Join(dir, "probe")); err == nil {
		f.Close()
		t.Skip("the folder stays writable (running as root)")
	}
	ro, err := Open(ctx, path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.List(ctx); err != nil {
		t.Fatal(err)
	}
}
