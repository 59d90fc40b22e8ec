// Package postgres is the transcript store ([store.DB]) on PostgreSQL,
// through github.com/jackc/pgx/v5: the same behaviour as store/sqlite (one
// conformance suite, store/storetest, runs against both), for several
// harness processes on several machines sharing one store.
//
// [Open] applies the migrations a database lacks in one transaction under
// an advisory lock and refuses a database written by a newer harness. Every
// string a model, a tool or a user wrote is stored as bytea, so NUL bytes
// and invalid UTF-8 come back byte for byte; payloads live apart from the
// result rows that listing and loading read, one bytea whatever their size
// (up to PostgreSQL's 1 GiB per value); each distinct system prompt, tool
// schema and tool list is stored once by content hash. A round's request
// is stored when it is made, apart from the round, which another process
// may store: reads join the two.
//
// # One turn at a time per conversation
//
// BeginTurn takes a session-level advisory lock keyed by the conversation
// (pg_try_advisory_lock) on a pooled connection it keeps for the turn; every
// write of the turn goes through it, and EndTurn releases both. Another
// turn, in this process or another, is refused at once with an error
// wrapping [store.ErrConversationBusy]; Save, Delete and writes of a turn
// that does not hold the lock (but a request's) take the same key as a
// transaction-scoped lock and are refused the same way. A process that dies mid-turn loses its
// connection and with it the lock, so no lease outlives its holder. Each
// turn in progress holds one connection: Options.MaxConns bounds the turns
// one process records at once.
//
// A turn owned by something that outlives its process (a durable workflow)
// is continued by another store with ResumeTurn (store.TurnResumer), which takes the lock as BeginTurn does; a store whose
// turn connection broke resumes on a new connection under a new lock. A
// session the server has not yet seen die keeps its lock until the server's
// TCP keepalives end it.
package postgres
