package benchcore

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

// TestDeferPinKeepsClientToolsWhole checks that the presets pin what
// their docs say: harness's and harness+defer's selectors pin clientTools,
// so on tools100's list (Claude Code's 16 and an 84-tool catalogue) every
// Claude Code tool is offered whole on every turn (harness+defer offers
// the catalogue tools beyond the TopK whole ones as stubs), where
// harness-no-pin's kept list leaves some of the client's tools out.
func TestDeferPinKeepsClientToolsWhole(t *testing.T) {
	b, err := os.ReadFile("testdata/tools100.json")
	if err != nil {
		t.Fatal(err)
	}
	specs, err := replay.ParseToolSpecs(b)
	if err != nil {
		t.Fatal(err)
	}
	client := clientTools()
	inputs := []string{"Refund the last invoice of customer 4411", "Schedule a meeting with the design team next Tuesday"}
	for _, tc := range []struct {
		preset string
		defers bool
		pinned bool
		// whole is how many tools each turn offers whole (a kept list
		// settles on every tool at the second turn's change of subject);
		// missed, whether some client tool is offered as a stub or not at all.
		whole  []int
		missed []bool
	}{
		{"harness", false, true, []int{toolselect.DefaultTopK, 100}, []bool{false, false}},
		{"harness+defer", true, true, []int{toolselect.DefaultTopK, toolselect.DefaultTopK}, []bool{false, false}},
		{"harness-no-pin", false, false, []int{toolselect.DefaultTopK, 100}, []bool{true, false}},
	} {
		t.Run(tc.preset, func(t *testing.T) {
			sel := presetSelector(t, tc.preset)
			if sel.Defer != tc.defers || (len(sel.Pinned) > 0) != tc.pinned || (tc.pinned && !slices.Equal(sel.Pinned, client)) {
				t.Fatalf("selector defers %v, pins %v; want deferring %v, pinning clientTools %v", sel.Defer, sel.Pinned, tc.defers, tc.pinned)
			}
			conv := harness.NewConversation("c")
			for i, in := range inputs {
				conv.Turns = append(conv.Turns, &harness.Turn{Index: i + 1, Input: in})
				got, err := sel.Select(t.Context(), conv, in, specs)
				if err != nil {
					t.Fatal(err)
				}
				full := map[string]harness.ToolSpec{}
				for _, sp := range specs {
					full[sp.Name] = sp
				}
				whole, shownWhole := 0, map[string]bool{}
				for _, g := range got {
					if reflect.DeepEqual(g, full[g.Name]) {
						whole++
						shownWhole[g.Name] = true
					}
				}
				missed := 0
				for _, sp := range specs {
					if slices.Contains(client, sp.Name) && !shownWhole[sp.Name] {
						missed++
					}
				}
				if whole != tc.whole[i] || (missed > 0) != tc.missed[i] {
					t.Errorf("turn %d: %d tools whole (want %d), %d client tools not offered whole (want some: %v)", i+1, whole, tc.whole[i], missed, tc.missed[i])
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
	cfg, err := p.Build(replay.Env{})
	if err != nil {
		t.Fatal(err)
	}
	sel, ok := cfg.Selector.(*toolselect.Selector)
	if !ok {
		t.Fatalf("%s: selector %T, want *toolselect.Selector", name, cfg.Selector)
	}
	return sel
}

// TestClientToolsAreDistinctNames: clientTools are exact names (no glob
// meta-character, so a pattern keeps only the tool it names) without
// repeats.
func TestClientToolsAreDistinctNames(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range clientTools() {
		if n == "" || seen[n] || strings.ContainsAny(n, `*?[\`) {
			t.Errorf("client tool %q: empty, repeated or a glob", n)
		}
		seen[n] = true
	}
}
