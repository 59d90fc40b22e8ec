package policy

import (
	"slices"
	"strconv"

	"github.com/agentharness/harness"
)

// The old words of a mark's rule, which transcripts stored before rules
// were named (see ClearRule) hold after compactName: "clear-from N" (a
// clear for cost took only results whose model copy counts at least N
// tokens) and "keep-previews" (it left whole the results a ceiling cut to
// a preview). A mark with a word that does not parse clears every result
// at or before it.
const (
	clearFromWord    = "clear-from"
	keepPreviewsWord = "keep-previews"
)

// oldRuleOf reads the old words of a mark's By, those after compactName.
func oldRuleOf(words []string) markRule {
	var r markRule
	for i := 0; i < len(words); i++ {
		switch {
		case words[i] == clearFromWord && i+1 < len(words):
			n, err := strconv.Atoi(words[i+1])
			if err != nil || n <= 0 {
				return markRule{}
			}
			r.from = n
			i++
		case words[i] == keepPreviewsWord:
			r.keepPreviews = true
		case words[i] == allWord:
			r.all = true
		default:
			return markRule{}
		}
	}
	return r
}

// oldWords are r's old words, each after a space ("" for none).
func (r markRule) oldWords() string {
	s := ""
	if r.from > 0 {
		s += " " + clearFromWord + " " + strconv.Itoa(r.from)
	}
	if r.keepPreviews {
		s += " " + keepPreviewsWord
	}
	return s
}

// oldTakes reports whether a clear under r's old words took res, whose
// model copy counts stored() tokens.
func (r markRule) oldTakes(res *harness.ToolResult, stored func() int) bool {
	if r.keepPreviews && previewed(res) {
		return false
	}
	return r.from <= 0 || stored() >= r.from
}

// previewed reports whether a ceiling cut res to a preview at arrival.
func previewed(res *harness.ToolResult) bool {
	return slices.ContainsFunc(res.Cuts, func(c harness.Cut) bool {
		return c.Kind == harness.CutSpilled || c.Kind == harness.CutTruncated
	})
}
