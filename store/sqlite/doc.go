// Package sqlite is the transcript store ([store.Store]) on one SQLite file,
// through the pure-Go driver modernc.org/sqlite (no cgo).
//
// The database runs in WAL mode with a busy timeout, so readers never block
// the writer and two harness processes can share one file. Writes from one
// process go through a single connection (SQLite has one writer anyway), so
// concurrent runs on different conversations queue instead of failing with
// SQLITE_BUSY. The schema is versioned: [Open] applies the migrations a file
// lacks, in order, each in its own transaction, and refuses a file written
// by a newer harness.
//
// Full payloads live in their own table, apart from the result rows that
// listing and loading read, so a conversation holding a 5 MB result lists
// and resumes as fast as one without it. Each guard's cut of a model copy
// is kept whole, with every earlier call the copy points at (Cut.Refs,
// since schema v5), so a resumed conversation's compaction keeps all of
// them while the pointer is shown.
//
// Each round also refers to the request that produced it: its system
// prompt and the list of tool schemas it sent (Store.Requests). Prompts,
// schemas and lists are stored once each by content hash and shared by
// every round and conversation that sent them, so 84 tools offered in 8
// rounds are 84 schema rows, not 672; Delete removes those nothing refers
// to any more.
//
// A payload above Options.ChunkBytes (64 MiB by default, since schema v7)
// is stored in chunks of that size: SQLite refuses a value over
// 1,000,000,000 bytes, and a round must be stored whatever its results
// weigh.
//
// Each round keeps when its response arrived (Round.Answered, since schema
// v8; rounds stored before load with a zero time), which is what a loaded
// conversation's View.Idle counts from.
//
// # One turn at a time per conversation
//
// One conversation is never written by two turns at once (the same
// conversation-level rule store/postgres keeps, checked by the one
// conformance suite). BeginTurn claims the conversation in a leases row
// (since schema v6) inside its write transaction, which BEGIN IMMEDIATE
// makes exclusive across processes; every write of the turn renews the
// lease and EndTurn or Close releases it. Within one Store, the turn is
// known by its conversation and index: a second turn of the same Store is
// refused too, and so are writes on behalf of any other turn, including a
// Turn of the running index whose own BeginTurn was refused (an agent whose
// BeginTurn failed still records that turn's end); another Turn of that
// index, reloaded from the store, writes as the turn. The refusal wraps
// [store.ErrConversationBusy] and names the holder's pid and host.
// A note added during the turn by its Store is part of it; Save and Delete
// are refused while any turn holds the conversation. Where store/postgres
// relies on a session lock dying with its connection, a lease has to be
// recovered: a holder on this machine whose process is gone is taken over
// at once, one elsewhere after Options.LeaseTTL without a write, and the
// turn it left unended is stored as Interrupted.
//
// A turn owned by something that outlives its process (a durable
// workflow, whose next step runs in another worker) is continued with
// [Store.ResumeTurn] (store.TurnResumer): the same takeover, and in the
// same transaction the turn is reopened, so the stored turn reads as if
// one writer had recorded it — its rounds from both writers, in order,
// and the outcome, end time and usage its last writer gives EndTurn.
package sqlite
