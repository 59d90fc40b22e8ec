package policy

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/tokens"
)

// TestPlaceholdersAreRenderedOnce checks that a cleared result shows the
// very same placeholder string in every later request (so its count is
// found by identity, not rendered and counted again), and that a fresh
// policy renders the same text.
func TestPlaceholdersAreRenderedOnce(t *testing.T) {
	const n, size = 40, 1500
	reqs, evs, _, _ := clearOldRun(t, n, size, &CompactPolicy{Window: 1 << 20, Counter: tokens.NewCache(o200k(t), nil)})
	if len(evs) == 0 {
		t.Fatal("nothing cleared")
	}
	placeholders := func(req *harness.Request) map[string]string {
		out := map[string]string{}
		for _, m := range req.Messages {
			if m.Role == harness.RoleTool && strings.HasPrefix(m.Text(), "[cleared") {
				out[m.ToolCallID] = m.Text()
			}
		}
		return out
	}
	last, before := placeholders(reqs[len(reqs)-1]), placeholders(reqs[len(reqs)-2])
	if len(before) == 0 {
		t.Fatal("no placeholder in the last requests")
	}
	same := 0
	for id, text := range before {
		if got, ok := last[id]; ok {
			if got != text {
				t.Errorf("%s: placeholder changed between requests:\n%s\n%s", id, text, got)
			}
			if unsafe.StringData(got) == unsafe.StringData(text) {
				same++
			}
		}
	}
	if same != len(before) {
		t.Errorf("%d of %d placeholders re-rendered instead of reused", len(before)-same, len(before))
	}
	// A fresh policy (empty cache) renders the same requests.
	again, _, _, _ := clearOldRun(t, n, size, &CompactPolicy{Window: 1 << 20, Counter: tokens.NewCache(o200k(t), nil)})
	for id, text := range placeholders(again[len(again)-1]) {
		if last[id] != text {
			t.Errorf("%s: %q, fresh policy %q", id, last[id], text)
		}
	}
}
