package temporal

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
)

func TestSQLiteJournal(t *testing.T) {
	ctx := context.Background()
	j, err := OpenSQLiteJournal(ctx, filepath.Join(t.TempDir(), "j.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	k := Key{Conversation: "c", Turn: 1, Round: 2, Name: "call:x"}
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
		k    Key
		want bool
	}{
		{k, true},
		{Key{Conversation: "c", Turn: 1, Round: 2, Name: "call:y"}, false},
		{Key{Conversation: "d", Turn: 1, Round: 2, Name: "call:x"}, false},
		{Key{Conversation: "c", Turn: 2, Round: 2, Name: "call:x"}, false},
	} {
		if v, ok, err := j.Get(ctx, tc.k); ok != tc.want || err != nil || (ok && string(v) != got[0]) {
			t.Errorf("Get(%s) = %q, %v, %v; want %v", tc.k, v, ok, err, tc.want)
		}
	}
	other := Key{Conversation: "c", Turn: 2, Name: "model"}
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

func TestOpenSQLiteJournalNeedsAPath(t *testing.T) {
	if _, err := OpenSQLiteJournal(context.Background(), ""); err == nil {
		t.Fatal("no error for an empty path")
	}
}
