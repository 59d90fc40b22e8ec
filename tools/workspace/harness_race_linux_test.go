//go:build linux

package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// TestHardLinkReadRacesSwapOfHarness reads .harness/hx, a hard link to a
// file inside the workspace, while a goroutine exchanges .harness with
// evil/, whose hx is a hard link to a file outside (renameat2
// RENAME_EXCHANGE), as fast as it can, for a fixed number of reads (no
// time limit). No read may return the outside file.
func TestHardLinkReadRacesSwapOfHarness(t *testing.T) {
	const reads = 1000
	secret := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(secret, []byte("root:SECRET:0:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, dir := newTestWorkspace(t, nil, map[string]string{".harness/ok": "INSIDE\n", "evil/": ""})
	if err := os.Link(filepath.Join(dir, ".harness/ok"), filepath.Join(dir, ".harness/hx")); err != nil {
		t.Skipf("hard links: %v", err)
	}
	if err := os.Link(secret, filepath.Join(dir, "evil/hx")); err != nil {
		t.Skipf("hard links: %v", err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		a, b := filepath.Join(dir, "evil"), filepath.Join(dir, ".harness")
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("renameat2: %v", err)
				return
			}
		}
	})
	leaked, inside := 0, 0
	for range reads {
		text := run(t, w, "read_file", map[string]any{"path": ".harness/hx"}).FullText()
		if strings.Contains(text, "SECRET") {
			leaked++
		}
		if strings.Contains(text, "INSIDE") {
			inside++
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d of %d reads returned the file inside .harness, the others were refused", inside, reads)
	if leaked > 0 {
		t.Fatalf("%d of %d reads returned the outside file", leaked, reads)
	}
}
