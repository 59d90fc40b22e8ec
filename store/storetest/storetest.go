// Package storetest is the conformance suite of the transcript stores:
// every behaviour a [store.DB] promises that does not depend on how it
// keeps its bytes (round trips byte for byte, lazy payloads and outlines,
// large payloads, cut refs, requests stored once, notes, events and view
// cuts, listing and deletion, stale and concurrent writers, one turn at a
// time per conversation, a turn resumed by another store after a crash,
// the proxy's claims, savings, fork links and decisions, the spill files
// only the store depends on), run against a backend by [Run]. The stores (store/sqlite, store/postgres) run it in their own
// tests, and [Bench], the benchmark every backend runs alike.
package storetest

import (
	"context"
	"testing"

	"github.com/agentharness/harness/store"
)

// Options configure a store the suite opens. Nil means defaults.
type Options struct {
	// OnDelete is the store's hook that removes a conversation's files.
	OnDelete func(ctx context.Context, conversation string) error
	// ChunkBytes, when positive, is the size above which a store that
	// keeps large payloads in chunks (Backend.Chunks) cuts them; a store
	// without chunks ignores it.
	ChunkBytes int
}

// Backend is one fresh, empty database of a store.
type Backend struct {
	// Open opens a store on the database; several stores opened on one
	// backend stand for several processes sharing it. The backend closes
	// them when the test ends (closing one twice must be harmless), and
	// fails t on an event the store could not write (the stores'
	// Options.OnEventError).
	Open func(t testing.TB, opts *Options) store.DB
	// Count returns the rows of a table of the schema (both stores name
	// their tables alike), only those of conversation conv when it is not
	// "".
	Count func(t testing.TB, table, conv string) int
	// TurnLocks says the store refuses a second turn of a conversation in
	// progress with store.ErrConversationBusy; the suite's locking tests
	// run only then.
	TurnLocks bool
	// Chunks says the store keeps a payload above Options.ChunkBytes in
	// several rows of a table result_chunks (SQLite, whose values stop at
	// 1,000,000,000 bytes). PostgreSQL does not: a bytea holds up to 1 GiB,
	// so it keeps every payload as one value; the suite's large-payload
	// test then checks the round trip only.
	Chunks bool
	// Crash, when set, makes a store look like a process killed in the
	// middle of its turns: what it holds in the database is left as such
	// a process leaves it (an SQLite lease whose holder is gone, a
	// PostgreSQL session that ended without unlocking), and the store is
	// not used again. Without it the suite closes the store instead.
	Crash func(t testing.TB, s store.DB)
}

// Run runs the conformance suite; newBackend gives each test a fresh
// database.
func Run(t *testing.T, newBackend func(t testing.TB) *Backend) {
	tests := []struct {
		name string
		fn   func(t *testing.T, be *Backend)
	}{
		{"SaveLoadRoundTrip", testSaveLoadRoundTrip},
		{"RoundAnswerTimes", testRoundAnswerTimes},
		{"TurnContext", testTurnContext},
		{"NotFound", testNotFound},
		{"ReusedCallIDs", testReusedCallIDs},
		{"BeginTurnRefusesStaleConversation", testStaleConversation},
		{"ListAndDelete", testListAndDelete},
		{"EventsKeepInvalidArguments", testEventsKeepInvalidArguments},
		{"ForkLink", testForkLink},
		{"ForksAndDecisions", testForksAndDecisions},
		{"Resume", testResume},
		{"EventsAndViewCuts", testEventsAndViewCuts},
		{"TurnEndStoredOnce", testTurnEndStoredOnce},
		{"Notes", testNotes},
		{"CutRefsSurviveReopen", testCutRefsSurviveReopen},
		{"CutRefsByteForByte", testCutRefsByteForByte},
		{"LazyPayloads", testLazyPayloads},
		{"LoadOutline", testLoadOutline},
		{"SpillOnly", testSpillOnly},
		{"LargePayloads", testLargePayloads},
		{"RequestsRecorded", testRequestsRecorded},
		{"RequestsDeduplicated", testRequestsDeduplicated},
		{"RequestsOfAFailedCall", testRequestsOfAFailedCall},
		{"RequestsByRound", testRequestsByRound},
		{"SavedConversationHasNoRequests", testSavedConversationHasNoRequests},
		{"ToolSpecsByteForByte", testToolSpecsByteForByte},
		{"ConcurrentRuns", testConcurrentRuns},
		{"TwoStoresShareOneDatabase", testTwoStores},
		{"ConversationBusy", testConversationBusy},
		{"RacingWriters", testRacingWriters},
		{"ResumeTurn", testResumeTurn},
		{"Savings", testSavings},
		{"Claims", testClaims},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newBackend(t)) })
	}
}

// needLocks skips a test of turn locks on a backend without them.
func needLocks(t *testing.T, be *Backend) {
	t.Helper()
	if !be.TurnLocks {
		t.Skip("this store does not lock a conversation for a turn (Backend.TurnLocks)")
	}
}

// flushEvents makes s write the events it holds: reading events does
// (store.Store.Events), and a write error fails the test through the
// backend (Backend.Open).
func flushEvents(ctx context.Context, t *testing.T, s store.DB) {
	t.Helper()
	if _, err := s.Events(ctx, "", 0); err != nil {
		t.Fatal(err)
	}
}

// open opens a store on be (Backend.Open).
func (be *Backend) open(t testing.TB, opts *Options) store.DB {
	t.Helper()
	return be.Open(t, opts)
}
