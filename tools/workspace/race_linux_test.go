//go:build linux

package workspace

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// TestWriteRacesSwapIntoHarness races write_file against a goroutine that
// swaps a real folder with a way into .harness/ (renameat2 RENAME_EXCHANGE)
// as fast as it can, for a fixed number of writes (no time limit). Nothing
// may ever land in .harness/: not the target, not a temporary file.
func TestWriteRacesSwapIntoHarness(t *testing.T) {
	const writes = 1000
	for _, tc := range []struct {
		name string
		// setup creates the thing "rd" is exchanged with and returns its name.
		setup func(t *testing.T, dir string) string
		// open: some writes must go through. Not so when rd is exchanged
		// with .harness itself: once the real rd has been seen named
		// .harness, it stays protected for the workspace's life.
		open bool
	}{
		{"symlink to .harness", func(t *testing.T, dir string) string {
			if err := os.Symlink(".harness", filepath.Join(dir, "rd-alt")); err != nil {
				t.Fatal(err)
			}
			return "rd-alt"
		}, true},
		{".harness itself", func(t *testing.T, dir string) string { return ".harness" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, dir := newTestWorkspace(t, nil, map[string]string{".harness/harness.db": "STORE", "rd/": ""})
			other := tc.setup(t, dir)
			// Hold the real .harness by handle: whatever name it has when
			// the swapper stops, its content is checked.
			harnessDir, err := os.Open(filepath.Join(dir, ".harness"))
			if err != nil {
				t.Fatal(err)
			}
			defer harnessDir.Close()

			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				a, b := filepath.Join(dir, "rd"), filepath.Join(dir, other)
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
			landed := -1 // the first write after which the store had changed
			wrote := 0
			for i := range writes {
				res := run(t, w, "write_file", map[string]string{"path": "rd/harness.db", "content": "OVERWRITTEN"})
				if res.IsError && !strings.Contains(res.FullText(), "write_file") {
					t.Fatalf("write %d: %s", i, res.FullText())
				}
				if !res.IsError {
					wrote++
				}
				if b, err := os.ReadFile(filepath.Join("/proc/self/fd", strconv.Itoa(int(harnessDir.Fd())), "harness.db")); err != nil || string(b) != "STORE" {
					landed = i
					break
				}
			}
			close(stop)
			wg.Wait()
			t.Logf("%d of %d writes went through (into rd/), the others were refused", wrote, writes)
			if tc.open && wrote == 0 {
				t.Fatal("no write went through: the race never opened the window")
			}

			entries, err := harnessDir.ReadDir(-1)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			b, _ := os.ReadFile(filepath.Join("/proc/self/fd", strconv.Itoa(int(harnessDir.Fd())), "harness.db"))
			if landed >= 0 || len(names) != 1 || string(b) != "STORE" {
				t.Fatalf("%d writes: write %d overwrote the store; .harness holds %v, harness.db %q", writes, landed, names, b)
			}
			// No temporary file is left anywhere.
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && strings.HasPrefix(d.Name(), ".harness-write-") {
					t.Errorf("temporary file left: %s", p)
				}
				return nil
			})
		})
	}
}
