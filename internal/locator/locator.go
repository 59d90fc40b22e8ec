// Package locator is the vocabulary every cut shares for where the rest of
// a result can be read back: a spill path relative to the workspace, or
// "call:<id>" for the transcript store (the recall tool), and the one
// sentence that tells the model how to get it.
package locator

import (
	"fmt"
	"strings"

	"github.com/agentharness/harness"
)

// callPrefix marks a locator that names a stored result by its call id.
const callPrefix = "call:"

// Call returns the locator of the stored result of call id.
func Call(id string) string { return callPrefix + id }

// CallID returns the call id a "call:<id>" locator names; ok is false for
// a spill path or "".
func CallID(loc string) (id string, ok bool) { return strings.CutPrefix(loc, callPrefix) }

// IsCall reports whether loc names a stored result rather than a file.
func IsCall(loc string) bool { return strings.HasPrefix(loc, callPrefix) }

// Newest returns the locator of the newest cut of res that has one, or
// Call(callID) when none has (callID is res.CallID when res has one).
func Newest(res *harness.ToolResult, callID string) string {
	if res != nil {
		for j := len(res.Cuts) - 1; j >= 0; j-- {
			if res.Cuts[j].Locator != "" {
				return res.Cuts[j].Locator
			}
		}
		if res.CallID != "" {
			callID = res.CallID
		}
	}
	return Call(callID)
}

// Spill returns the spill path of the newest spill cut of res, or
// Call(res.CallID) when it was never spilled.
func Spill(res *harness.ToolResult) string {
	for i := len(res.Cuts) - 1; i >= 0; i-- {
		if res.Cuts[i].Kind == harness.CutSpilled && res.Cuts[i].Locator != "" {
			return res.Cuts[i].Locator
		}
	}
	return Call(res.CallID)
}

// Hint is a locator phrased for the model inside a marker: the spill path,
// or "call id <id>".
func Hint(loc string) string {
	if id, ok := CallID(loc); ok {
		return "call id " + id
	}
	return loc
}

// HowToGetBack is the clause that tells the model how to read a hidden
// result again, given its locator (see [Spill]), its call id and whether
// the agent offers the recall tool: "read the file P, or call recall with
// {"call_id":"X"}", "read the file P", "call recall with {...}", or, with
// neither a file nor recall, "it is stored under call id X".
func HowToGetBack(loc, callID string, recall bool) string {
	file := loc != "" && loc != Call(callID)
	switch {
	case file && recall:
		return fmt.Sprintf("read the file %s, or call recall with {\"call_id\":%q}", loc, callID)
	case file:
		return fmt.Sprintf("read the file %s", loc)
	case recall:
		return fmt.Sprintf("call recall with {\"call_id\":%q}", callID)
	default:
		return fmt.Sprintf("it is stored under call id %s", callID)
	}
}
