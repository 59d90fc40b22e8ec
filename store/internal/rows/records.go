package rows

import (
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/codec"
)

// ForkColumns are a proxy_forks row's, for ScanFork.
const ForkColumns = "conv_id, parent, turn, round, shared_turns, time_ns"

// DecisionColumns are a proxy_decisions row's, for ScanDecision.
const DecisionColumns = "turn, round, call_id, tool, content_sha256, decided_by, text, locator, bytes_in, bytes_out, time_ns"

// ScanFork reads ForkColumns into a fork link.
func ScanFork(sc Scanner) (store.Fork, error) {
	var f store.Fork
	var ns int64
	err := sc.Scan(Str{&f.Conversation}, Str{&f.Parent}, &f.Turn, &f.Round, &f.SharedTurns, &ns)
	f.Time = codec.FromNS(ns)
	return f, err
}

// ScanDecision reads DecisionColumns into a decision.
func ScanDecision(sc Scanner) (store.Decision, error) {
	var d store.Decision
	var ns int64
	err := sc.Scan(&d.Turn, &d.Round, Str{&d.CallID}, Str{&d.Tool}, Str{&d.ContentSHA256}, Str{&d.By}, Str{&d.Text},
		Str{&d.Locator}, &d.BytesIn, &d.BytesOut, &ns)
	d.Time = codec.FromNS(ns)
	return d, err
}
