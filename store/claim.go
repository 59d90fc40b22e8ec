package store

import "context"

// Claimer is implemented by stores that several proxy processes share
// (store/postgres, and store/sqlite for processes on one machine): a log
// of first-writer-wins entries per conversation, written before a model
// call is forwarded, so that every process sends the same bytes for it.
// A key is written once: the first Claim of it stores its value, every
// later one, by any process, gets that first value back. The entries are
// deleted with their conversation.
type Claimer interface {
	// Claim stores each entry's Value under its Key in conversation conv
	// unless the key is there already, all in one transaction (one round
	// trip to a server), and returns the entries that hold, in the order
	// given: each this value (Won set) or the one stored first. A key
	// given twice holds its first value.
	Claim(ctx context.Context, conv string, entries []Claim) ([]Claim, error)
	// Claims returns the entries of conv whose Seq is above after, in
	// Seq order. An entry is visible to Claims only once every entry of
	// its conversation with a lower Seq is, so a reader that remembers
	// the highest Seq it saw misses none.
	Claims(ctx context.Context, conv string, after int64) ([]Claim, error)
}

// Claim is one entry of a conversation's claim log (see [Claimer]).
type Claim struct {
	// Seq orders the entries of a conversation (increasing, not dense).
	Seq   int64
	Key   string
	Value []byte
	// Won is set by Claimer.Claim when this call stored the value.
	Won bool
	// Quiet, given to Claimer.Claim, says no reader waits for the entry:
	// a ClaimWatcher need not tell its watches of it (a claim whose
	// entries are all quiet wakes none, which spares a server the
	// serialized notification at commit). Readers still find it in the
	// log.
	Quiet bool
}

// ClaimWatcher is implemented by a [Claimer] that can tell when a
// conversation's log grows (store/postgres, through LISTEN/NOTIFY), so a
// reader waiting for an entry need not poll.
type ClaimWatcher interface {
	// WatchClaims returns a channel that is closed once conv's log may
	// hold entries whose key starts with prefix ("": any key) that it did
	// not hold when WatchClaims was called. On such a claim, once it is
	// committed, the channel first receives the keys of prefix the claim
	// named, so a waiter for one key need not read the log; when the
	// store can no longer tell (its listening connection broke, or the
	// claim named too many keys to list) it is closed without a value.
	// Call stop when done waiting. Read the log after WatchClaims and
	// before waiting, so no entry falls between.
	WatchClaims(conv, prefix string) (changed <-chan []string, stop func())
}
