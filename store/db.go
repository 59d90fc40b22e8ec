package store

import (
	"context"

	"github.com/agentharness/harness"
)

// DB is a transcript store on a database, as store/sqlite and
// store/postgres open it: a Store whose turns another process may resume
// (TurnResumer), with the proxy's claim log (Claimer) and savings
// (SavingsLog). Code that takes a store should ask for the smallest of
// these interfaces it uses; DB is what the drivers' Open returns, so that
// one variable holds either database.
type DB interface {
	Store
	TurnResumer
	Claimer
	SavingsLog

	// Save stores a whole conversation that is not in the store yet (an
	// import, a replay, a fixture) in one transaction. A conversation
	// loaded without its full payloads (see Partial) is refused: saving it
	// would store model copies as if they were what the tools returned.
	// So is one a turn in progress holds (ErrConversationBusy).
	Save(ctx context.Context, conv *harness.Conversation) error
	// LoadOutline returns a stored conversation without any result's
	// payload: turns, rounds, messages and calls, and each result with
	// its sizes, cuts, metadata and the model copy a guard wrote, Parts
	// and Structured nil. What it costs does not depend on the size of
	// any result, which is what a reader of the transcript's shape needs.
	LoadOutline(ctx context.Context, id string) (*harness.Conversation, error)
	// SpillOnly returns the locators of the spill files that hold the
	// only full copy of a stored result: a result cut with
	// harness.CutSpilled whose stored payload is smaller than the result
	// (a stream that overflowed the ceiling: the store keeps its
	// preview). A collector of spill files keeps them. The test compares
	// characters stored with bytes received, so a result of multi-byte
	// text stored whole counts too: it errs on keeping a file.
	SpillOnly(ctx context.Context) (map[string]bool, error)

	// Path names the database in messages: an SQLite file's path, a
	// PostgreSQL address without its password.
	Path() string
	// EventErr returns the first error met while storing an event
	// (Observe cannot fail), or nil.
	EventErr() error
}
