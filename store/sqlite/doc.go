// Package sqlite is the transcript store ([store.DB]) on one SQLite file,
// through the pure-Go driver modernc.org/sqlite (no cgo).
//
// The database runs in WAL mode with a busy timeout, so readers never block
// the writer and two harness processes can share one file; one process
// writes through a single connection, so concurrent runs queue instead of
// failing with SQLITE_BUSY. [Open] applies the migrations a file lacks, in
// order, and refuses a file written by a newer harness; Options.ReadOnly
// opens a store for reading only.
//
// Full payloads live apart from the result rows that listing and loading
// read, so a conversation holding a large result lists and resumes as fast
// as one without it; a payload above Options.ChunkBytes is stored in chunks
// (SQLite refuses a value over 1,000,000,000 bytes). Each guard's cut is
// kept whole with every earlier call it points at (Cut.Refs). Each round
// refers to the request that produced it (store.Store.Requests): system prompts,
// schemas and tool lists are stored once each by content hash and shared;
// Delete removes those nothing refers to any more. Each round keeps when
// its response arrived (Round.Answered), which View.Idle counts from.
//
// # One turn at a time per conversation
//
// BeginTurn claims the conversation in a leases row inside an exclusive
// write transaction (BEGIN IMMEDIATE); every write of the turn renews the
// lease, and EndTurn or Close releases it. A second turn, from this store
// or another process, is refused with an error wrapping
// [store.ErrConversationBusy] that names the holder's pid and host; so are
// Save and Delete while a turn holds the conversation, and writes on behalf
// of a turn whose own BeginTurn was refused. A holder on this machine whose
// process is gone is taken over at once, one elsewhere after
// Options.LeaseTTL without a write, and the turn it left unended is stored
// as Interrupted.
//
// A turn owned by something that outlives its process (a durable
// workflow) is continued with ResumeTurn (store.TurnResumer): the
// same takeover, and the turn reopened in the same transaction, so it reads
// as if one writer had recorded it.
package sqlite
