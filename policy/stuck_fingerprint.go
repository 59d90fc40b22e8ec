package policy

import (
	"crypto/sha256"
	"slices"
	"strconv"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/canonjson"
)

// callFingerprint is a call's name and canonical arguments.
func callFingerprint(c harness.ToolCall) string {
	return c.Name + "(" + canonjson.OrRaw(c.Args) + ")"
}

// roundFingerprint is the sorted fingerprints of a round's calls: the
// order in which a model lists the calls of one round carries no meaning.
func roundFingerprint(r *harness.Round) string {
	fps := make([]string, len(r.Assistant.ToolCalls))
	for i, c := range r.Assistant.ToolCalls {
		fps[i] = callFingerprint(c)
	}
	slices.Sort(fps)
	return strings.Join(fps, "\n")
}

// roundResults is a digest of a round's full results, in the order of the
// sorted call fingerprints, to tell whether two identical rounds also got
// identical answers.
func roundResults(r *harness.Round) string {
	byID := make(map[string]*harness.ToolResult, len(r.Results))
	for _, res := range r.Results {
		byID[res.CallID] = res
	}
	type pair struct{ fp, text string }
	ps := make([]pair, len(r.Assistant.ToolCalls))
	for i, c := range r.Assistant.ToolCalls {
		ps[i].fp = callFingerprint(c)
		if res := byID[c.ID]; res != nil {
			ps[i].text = strconv.FormatBool(res.IsError) + ":" + res.FullText()
		}
	}
	slices.SortStableFunc(ps, func(a, b pair) int { return strings.Compare(a.fp, b.fp) })
	h := sha256.New()
	for _, p := range ps {
		h.Write([]byte(p.text))
		h.Write([]byte{0})
	}
	return string(h.Sum(nil))
}
