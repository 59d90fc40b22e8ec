// Package postgres is the transcript store ([store.Store]) on PostgreSQL,
// through github.com/jackc/pgx/v5: the same behaviour as store/sqlite
// (one conformance suite, store/storetest, runs against both), for several
// harness processes on several machines sharing one store.
//
// The schema is versioned like sqlite's: [Open] applies the migrations a
// database lacks in one transaction under an advisory lock (two processes
// opening a new database at once apply each step once) and refuses a
// database written by a newer harness. Every string a model, a tool or a
// user wrote is stored as bytea, so NUL bytes and invalid UTF-8 come back
// byte for byte; payloads live apart from the result rows that listing and
// loading read; each distinct system prompt, tool schema and tool list is
// stored once by content hash. A payload is one bytea whatever its size
// (up to PostgreSQL's 1 GiB per value, TOASTed out of the row): unlike
// store/sqlite, whose values stop at 1,000,000,000 bytes, this store has
// no chunks and no ChunkBytes option.
//
// # One turn at a time per conversation
//
// Many processes may append to different conversations at once; one
// conversation is never written by two turns at once. BeginTurn takes a
// session-level advisory lock keyed by the conversation
// (pg_try_advisory_lock) on a connection it keeps for the turn, and every
// write of the turn goes through that connection; EndTurn releases both.
// The loser is refused at once: BeginTurn returns an error wrapping
// [store.ErrConversationBusy], whether the other turn runs in this process
// or another. A process that dies mid-turn loses its connection, and the
// server releases its lock with it, so no lease outlives its holder. A
// note added during the turn is part of it. Save and Delete, and writes
// of a turn that does not hold the lock (an agent whose BeginTurn was
// refused still records that turn's end), take the same key as a
// transaction-scoped lock (pg_try_advisory_xact_lock) and are refused the
// same way while a turn holds it, even a turn of the same store. Each turn
// in progress holds one pooled
// connection: Options.MaxConns bounds the turns one process records at
// once. Within one store a turn is known by its conversation and index: a
// Turn of that index reloaded from the store writes through the turn's
// connection, except one whose own BeginTurn was refused.
//
// A turn owned by something that outlives its process (a durable
// workflow) is continued by another store with [Store.ResumeTurn]
// (store.TurnResumer), which takes the lock as BeginTurn does: at once when
// the process that held it died (its session ended with it), refused while
// it lives. A store whose turn connection broke (the server restarted,
// ending every session and lock) resumes on a new connection under a new
// lock; its writes in between fail with the connection's error and store
// nothing of their transaction. A session the server has not yet seen die
// (a machine gone without closing its sockets) keeps its lock until the
// server's TCP keepalives end it (tcp_keepalives_idle and friends), so
// resuming is refused busy until then.
package postgres
