package bench

import "github.com/agentharness/harness/guard"

// relevantResults is harness's ResultPolicy at a ceiling of maxBytes with
// guard.Relevant as its preview: a spilled result shows a 1.5 KiB head, a
// 1 KiB tail and 1.5 KiB of the lines that best match the call's
// arguments, the agent's previous message and the turn's input. It is the
// policy of the harness+relevance ablations (24 KiB, and 8 KiB and
// 12 KiB, which ask whether a lower ceiling becomes affordable once the
// preview keeps what the agent looks for).
func relevantResults(maxBytes int) *guard.ResultPolicy {
	return &guard.ResultPolicy{MaxBytes: guard.Bytes(maxBytes), Preview: guard.Relevant{}}
}
