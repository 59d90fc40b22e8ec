package data

import (
	"io/fs"
	"path"
	"strings"
	"testing"
)

// TestShipped: every agent has runs, every folder with runs has its
// licence and a SOURCE.md naming each file, and every run imports in the
// agent's own format.
func TestShipped(t *testing.T) {
	want := map[string]string{"mini-swe-agent": "mini-swe-agent", "claude-code": "claude-code", "codex": "codex", "swe-agent": "swe-agent"}
	total := 0
	for _, a := range Agents() {
		files := Files(a)
		if len(files) < 4 {
			t.Errorf("%s: %d runs", a, len(files))
		}
		for _, f := range files {
			dir := path.Dir(f)
			src, err := fs.ReadFile(FS(), dir+"/SOURCE.md")
			if err != nil || !strings.Contains(string(src), path.Base(f)) || !strings.Contains(string(src), "License") {
				t.Errorf("%s: SOURCE.md does not name it and its licence (%v)", f, err)
			}
			entries, _ := fs.ReadDir(FS(), dir)
			lic := false
			for _, e := range entries {
				lic = lic || strings.HasPrefix(e.Name(), "LICENSE")
			}
			if !lic {
				t.Errorf("%s: no licence beside it", f)
			}
			info, _ := fs.Stat(FS(), f)
			total += int(info.Size())
		}
		recs, err := Load(t.Context(), a)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Format != want[a] || r.Calls() == 0 || !strings.HasPrefix(r.Source, "bench/data/"+a+"/") {
				t.Errorf("%s: %s is %s with %d calls", a, r.Source, r.Format, r.Calls())
			}
		}
	}
	if total > 6<<20 {
		t.Errorf("%d bytes shipped, over 6 MiB", total)
	}
	if _, err := Load(t.Context(), "aider"); err == nil {
		t.Error("no error for an agent with no runs")
	}
}
