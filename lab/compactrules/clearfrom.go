package compactrules

import (
	"strconv"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/policy"
)

// ClearFrom is a rule whose clears for cost take only the results whose
// model copy counts at least from tokens (and, as every rule, results that
// point at others); smaller ones stay whole until the window's clear takes
// everything. Only what it takes counts towards ClearOld, the payback and
// the savings bank. A from of zero or less is the default rule.
func ClearFrom(from int) policy.ClearRule {
	if from <= 0 {
		return policy.ClearRule{}
	}
	return policy.ClearRule{Name: "clear-from " + strconv.Itoa(from), Clear: func(c policy.ClearCandidate) (bool, string) {
		return c.Tokens() >= from, ""
	}}
}

// KeepPreviews is a rule whose clears for cost leave whole the results a
// ceiling cut to a preview at arrival (a cut of kind CutSpilled or
// CutTruncated on the stored result): the preview is already the lines
// chosen to show. The window's clear takes them.
func KeepPreviews() policy.ClearRule {
	return policy.ClearRule{Name: "keep-previews", Clear: func(c policy.ClearCandidate) (bool, string) {
		return !previewed(c.Result), ""
	}}
}

// previewed reports whether a ceiling cut res to a preview at arrival.
func previewed(res *harness.ToolResult) bool {
	for _, c := range res.Cuts {
		if c.Kind == harness.CutSpilled || c.Kind == harness.CutTruncated {
			return true
		}
	}
	return false
}
