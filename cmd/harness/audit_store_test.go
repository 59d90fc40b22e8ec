package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/sqlite"
)

// TestAuditPricesStoreByItsSavings: the transcript store a proxy or a
// launcher wrote names each call's model only in its savings log; audit
// of that store prices its conversations at that model's list price, as
// it prices a Claude Code session, instead of saying no recording names
// a model.
func TestAuditPricesStoreByItsSavings(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte(strings.Repeat("alpha beta gamma\n", 3000)), 0o644); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, `{"steps":[
		{"expect":{"turn":1,"round":1},"tool_calls":[{"id":"ra","name":"read_file","args":{"path":"a.txt"}}]},
		{"expect":{"turn":1,"final":true},"text":"read"}]}`)
	_, stderr, code := inproc(t, "run", "--model", "scripted:"+script, "--workspace", ws, "--max-rounds", "1", "read a.txt")
	if code != 0 {
		t.Fatalf("harness run: exit %d: %s", code, stderr)
	}
	m := regexp.MustCompile(`conversation (c_[0-9a-f]+) `).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no conversation id: %s", stderr)
	}
	db := filepath.Join(ws, ".harness", "harness.db")
	for _, tc := range []struct {
		name   string
		saving bool
		models []string
	}{
		{"no savings log", false, nil},
		{"a saving names the model", true, []string{"claude-sonnet-4-5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.saving {
				st, err := sqlite.Open(context.Background(), db, nil)
				if err != nil {
					t.Fatal(err)
				}
				err = st.AddSaving(context.Background(), store.Saving{At: time.Now(), Conversation: m[1], Client: "claude-code", Model: "claude-sonnet-4-5", TokensSaved: 10, Input: 100})
				st.Close()
				if err != nil {
					t.Fatal(err)
				}
			}
			stdout, stderr, code := inproc(t, "audit", "--json", "--presets", "harness-proxy", db)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var got struct {
				Headline struct {
					Priced int      `json:"priced_recordings"`
					Models []string `json:"models"`
					Dollar float64  `json:"dollars_none"`
				} `json:"headline"`
			}
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatal(err)
			}
			h := got.Headline
			if len(h.Models) != len(tc.models) || (len(tc.models) > 0 && (h.Models[0] != tc.models[0] || h.Priced != 1 || h.Dollar <= 0)) {
				t.Errorf("headline prices %d recordings (%v, $%.4f); want models %v", h.Priced, h.Models, h.Dollar, tc.models)
			}
		})
	}
}
