package benchcore

import "github.com/agentharness/harness/guard"

// headTailResults is harness's ResultPolicy with the head+tail preview
// (first 3 KiB, last 1 KiB) instead of the default guard.Relevant: the
// harness-no-relevance ablation, harness's default before the relevant
// preview was measured.
func headTailResults() *guard.ResultPolicy {
	return &guard.ResultPolicy{Preview: guard.HeadTail{}}
}
