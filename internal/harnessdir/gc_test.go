package harnessdir

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness/spill"
)

func TestGC(t *testing.T) {
	ws := t.TempDir()
	d := &spill.Dir{Workspace: ws}
	ctx := context.Background()
	old, err := d.Save(ctx, spill.Entry{Conversation: "old", CallID: "1", Tool: "t"}, strings.NewReader("0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := d.Save(ctx, spill.Entry{Conversation: "new", CallID: "1", Tool: "t"}, strings.NewReader("abc"))
	if err != nil {
		t.Fatal(err)
	}
	then := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(filepath.Join(ws, old.Locator), then, then); err != nil {
		t.Fatal(err)
	}
	rep, err := gC(ctx, ws, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Files != 1 || rep.Bytes != 10 || rep.Folders != 1 || rep.Kept != 1 {
		t.Fatalf("report %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(ws, fresh.Locator)); err != nil {
		t.Fatalf("fresh file removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, ".harness/spill/old")); !os.IsNotExist(err) {
		t.Fatalf("empty folder kept: %v", err)
	}
	// Nothing to collect is not an error; a negative age is.
	if _, err := gC(ctx, t.TempDir(), time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := gC(ctx, ws, -time.Hour); err == nil {
		t.Fatal("negative age accepted")
	}
}

// TestGCWithKeep: a file Keep names stays however old, counted as pinned.
func TestGCWithKeep(t *testing.T) {
	ws := t.TempDir()
	d := &spill.Dir{Workspace: ws}
	ctx := context.Background()
	var locs []string
	for _, call := range []string{"1", "2"} {
		saved, err := d.Save(ctx, spill.Entry{Conversation: "c", CallID: call, Tool: "t"}, strings.NewReader("data"))
		if err != nil {
			t.Fatal(err)
		}
		then := time.Now().Add(-48 * time.Hour)
		if err := os.Chtimes(filepath.Join(ws, saved.Locator), then, then); err != nil {
			t.Fatal(err)
		}
		locs = append(locs, saved.Locator)
	}
	rep, err := GCWith(ctx, ws, time.Hour, &GCOptions{Keep: func(loc string) bool { return loc == locs[0] }})
	if err != nil || rep.Files != 1 || rep.Pinned != 1 || rep.Folders != 0 {
		t.Fatalf("report %+v, %v", rep, err)
	}
	if _, err := os.Stat(filepath.Join(ws, locs[0])); err != nil {
		t.Fatalf("kept file removed: %v", err)
	}
}
