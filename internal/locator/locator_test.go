package locator

import (
	"testing"

	"github.com/agentharness/harness"
)

func TestLocators(t *testing.T) {
	if got := Call("c1"); got != "call:c1" {
		t.Fatalf("Call = %q", got)
	}
	if id, ok := CallID("call:c1"); !ok || id != "c1" {
		t.Fatalf("CallID = %q %v", id, ok)
	}
	if _, ok := CallID(".harness/spill/x.txt"); ok || IsCall(".harness/spill/x.txt") || !IsCall("call:x") {
		t.Fatal("a spill path read as a call locator")
	}
	spilled := &harness.ToolResult{CallID: "c2", Cuts: []harness.Cut{
		{Kind: harness.CutSpilled, Locator: "s/a.txt"}, {Kind: harness.CutDeduped, Locator: "call:c0"}}}
	for _, tc := range []struct{ name, got, want string }{
		{"newest", Newest(spilled, ""), "call:c0"},
		{"newest of nil", Newest(nil, "c9"), "call:c9"},
		{"newest uncut", Newest(&harness.ToolResult{CallID: "c3"}, "x"), "call:c3"},
		{"spill", Spill(spilled), "s/a.txt"},
		{"spill uncut", Spill(&harness.ToolResult{CallID: "c3"}), "call:c3"},
		{"hint file", Hint("s/a.txt"), "s/a.txt"},
		{"hint call", Hint("call:c3"), "call id c3"},
		{"back file+recall", HowToGetBack("s/a.txt", "c2", true), `read the file s/a.txt, or call recall with {"call_id":"c2"}`},
		{"back file", HowToGetBack("s/a.txt", "c2", false), "read the file s/a.txt"},
		{"back recall", HowToGetBack("call:c2", "c2", true), `call recall with {"call_id":"c2"}`},
		{"back none", HowToGetBack("call:c2", "c2", false), "it is stored under call id c2"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}
