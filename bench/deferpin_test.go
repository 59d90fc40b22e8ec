package bench

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/replay"
	"github.com/agentharness/harness/toolselect"
)

// TestDeferPinKeepsClientToolsWhole checks that harness+defer+pin pins
// what its doc says: its selector defers and pins ClientTools, so on
// tools100's list (Claude Code's 16 and an 84-tool catalogue) every
// Claude Code tool is offered whole on every turn, the catalogue tools
// beyond the TopK whole ones as stubs, where harness+defer stubs some of
// the client's tools.
func TestDeferPinKeepsClientToolsWhole(t *testing.T) {
	b, err := os.ReadFile("testdata/tools100.json")
	if err != nil {
		t.Fatal(err)
	}
	specs, err := replay.ParseToolSpecs(b)
	if err != nil {
		t.Fatal(err)
	}
	client := ClientTools()
	inputs := []string{"Refund the last invoice of customer 4411", "Schedule a meeting with the design team next Tuesday"}
	for _, tc := range []struct {
		preset      string
		pinned      bool
		whole       int // tools offered whole on every turn
		clientStubs bool
	}{
		{"harness+defer", false, toolselect.DefaultTopK, true},
		{"harness+defer+pin", true, toolselect.DefaultTopK, false},
	} {
		t.Run(tc.preset, func(t *testing.T) {
			sel := presetSelector(t, tc.preset)
			if !sel.Defer || (len(sel.Pinned) > 0) != tc.pinned || (tc.pinned && !slices.Equal(sel.Pinned, client)) {
				t.Fatalf("selector defers %v, pins %v; want deferring, pinning ClientTools: %v", sel.Defer, sel.Pinned, tc.pinned)
			}
			conv := harness.NewConversation("c")
			for i, in := range inputs {
				conv.Turns = append(conv.Turns, &harness.Turn{Index: i + 1, Input: in})
				got, err := sel.Select(t.Context(), conv, in, specs)
				if err != nil {
					t.Fatal(err)
				}
				whole, clientStubs := 0, 0
				for j, g := range got {
					isWhole := reflect.DeepEqual(g, specs[j])
					if isWhole {
						whole++
					}
					if !isWhole && slices.Contains(client, g.Name) {
						clientStubs++
					}
				}
				if whole != tc.whole || (clientStubs > 0) != tc.clientStubs {
					t.Errorf("turn %d: %d tools whole (want %d), %d client tools as stubs (want some: %v)", i+1, whole, tc.whole, clientStubs, tc.clientStubs)
				}
			}
		})
	}
}

// presetSelector returns the tool selector preset name's replay uses.
func presetSelector(t *testing.T, name string) *toolselect.Selector {
	t.Helper()
	p, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := p.build(replay.Env{})
	if err != nil {
		t.Fatal(err)
	}
	sel, ok := cfg.Selector.(*toolselect.Selector)
	if !ok {
		t.Fatalf("%s: selector %T, want *toolselect.Selector", name, cfg.Selector)
	}
	return sel
}

// TestClientToolsAreDistinctNames: ClientTools are exact names (no glob
// meta-character, so a pattern keeps only the tool it names) without
// repeats.
func TestClientToolsAreDistinctNames(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range ClientTools() {
		if n == "" || seen[n] || strings.ContainsAny(n, `*?[\`) {
			t.Errorf("client tool %q: empty, repeated or a glob", n)
		}
		seen[n] = true
	}
}
