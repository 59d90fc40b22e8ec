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
package sqlite
