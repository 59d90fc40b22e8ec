package temporal_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	htemporal "github.com/agentharness/harness/temporal"
)

// journals opens each Journal implementation on a fresh database: the
// PostgreSQL one needs Debian's postgresql package (pgtest skips without
// it, and fails when CI is set).
var journals = []struct {
	name string
	open func(t *testing.T) (htemporal.Journal, error)
}{
	{"sqlite", func(t *testing.T) (htemporal.Journal, error) {
		return htemporal.OpenSQLiteJournal(context.Background(), filepath.Join(t.TempDir(), "j.db"))
	}},
	{"postgres", func(t *testing.T) (htemporal.Journal, error) {
		return htemporal.OpenPostgresJournal(context.Background(), pgServer.DSN(t))
	}},
}

func TestJournal(t *testing.T) {
	for _, b := range journals {
		t.Run(b.name, func(t *testing.T) {
			j, err := b.open(t)
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			testJournal(t, j)
		})
	}
}

func testJournal(t *testing.T, j htemporal.Journal) {
	ctx := context.Background()
	k := htemporal.Key{Conversation: "c", Turn: 1, Round: 2, Name: "call:x"}
	if _, ok, err := j.Get(ctx, k); ok || err != nil {
		t.Fatalf("Get on an empty journal = %v, %v; want nothing", ok, err)
	}
	// Racing writers agree on the first entry stored.
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Go(func() {
			v, err := j.Put(ctx, k, []byte{byte('a' + i)})
			if err != nil {
				t.Error(err)
			}
			got[i] = string(v)
		})
	}
	wg.Wait()
	for _, v := range got {
		if v != got[0] {
			t.Fatalf("writers saw different entries: %q", got)
		}
	}
	for _, tc := range []struct {
		k    htemporal.Key
		want bool
	}{
		{k, true},
		{htemporal.Key{Conversation: "c", Turn: 1, Round: 2, Name: "call:y"}, false},
		{htemporal.Key{Conversation: "d", Turn: 1, Round: 2, Name: "call:x"}, false},
		{htemporal.Key{Conversation: "c", Turn: 2, Round: 2, Name: "call:x"}, false},
	} {
		if v, ok, err := j.Get(ctx, tc.k); ok != tc.want || err != nil || (ok && string(v) != got[0]) {
			t.Errorf("Get(%s) = %q, %v, %v; want %v", tc.k, v, ok, err, tc.want)
		}
	}
	other := htemporal.Key{Conversation: "c", Turn: 2, Name: "model"}
	if _, err := j.Put(ctx, other, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if err := j.DeleteTurn(ctx, "c", 1); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := j.Get(ctx, k); ok {
		t.Error("DeleteTurn left an entry of its turn")
	}
	if _, ok, _ := j.Get(ctx, other); !ok {
		t.Error("DeleteTurn removed an entry of another turn")
	}
}

func TestOpenPostgresJournalBadDSN(t *testing.T) {
	_, err := htemporal.OpenPostgresJournal(context.Background(), "postgres://u:secret@[::1/db")
	if err == nil {
		t.Fatal("no error for a malformed URL")
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("the error shows the password: %v", err)
	}
}

func TestOpenSQLiteJournalNeedsAPath(t *testing.T) {
	if _, err := htemporal.OpenSQLiteJournal(context.Background(), ""); err == nil {
		t.Fatal("no error for an empty path")
	}
}
