package harnessdir

import (
	"os"
	"path/filepath"
	"testing"
)

// TestIgnoreHarness: the .gitignore is written when absent, left as the
// user wrote it when present (asked again, as every spill asks), and a
// workspace whose .harness is not a folder gets an error.
func TestIgnoreHarness(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(ws string) error
		want    string
		wantErr bool
	}{
		{"absent", func(string) error { return nil }, gitignoreAll, false},
		{"the user's kept", func(ws string) error {
			if err := os.MkdirAll(filepath.Join(ws, ".harness"), 0o700); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(ws, ".harness", ".gitignore"), []byte("spill/\n"), 0o644)
		}, "spill/\n", false},
		{".harness is a file", func(ws string) error {
			return os.WriteFile(filepath.Join(ws, ".harness"), nil, 0o644)
		}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			if err := tc.setup(ws); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				err := IgnoreHarness(ws)
				if (err != nil) != tc.wantErr {
					t.Fatalf("IgnoreHarness: %v, want error %v", err, tc.wantErr)
				}
			}
			if tc.wantErr {
				return
			}
			b, err := os.ReadFile(filepath.Join(ws, ".harness", ".gitignore"))
			if err != nil || string(b) != tc.want {
				t.Errorf(".gitignore %q, %v; want %q", b, err, tc.want)
			}
		})
	}
}

// BenchmarkIgnoreHarness is the cost every spill file pays to keep the
// .gitignore in place once it is there.
func BenchmarkIgnoreHarness(b *testing.B) {
	ws := b.TempDir()
	if err := IgnoreHarness(ws); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := IgnoreHarness(ws); err != nil {
			b.Fatal(err)
		}
	}
}
