// Package store defines the transcript store: where every conversation,
// turn, round, tool call, full result, model copy, cut, usage figure and
// event is kept, so that what a tool really returned and what the model was
// shown of it can always both be read back (the model's copy is not the
// log).
//
// A [Store] plugs into an agent as its recorder (harness.Options.Recorder)
// and its event sink (harness.Options.Observer), loads a conversation to
// resume it, and fetches one full result by call id for the recall tool.
// One conversation is written by one turn at a time ([ErrConversationBusy]
// for the loser); a turn whose writer died is stored as [Interrupted] when
// the next writer takes the conversation over, unless that writer resumes
// it ([TurnResumer], for turns a durable workflow owns).
// Package store/sqlite is the implementation on a single SQLite file,
// store/postgres the one several processes share on PostgreSQL; both open
// a [DB] (every interface here, and what their users need beside) and pass
// the conformance suite of store/storetest.
//
// Large results are loaded lazily: [Store.Load] fills what views use (the
// model's copy of a result that guards cut, the full payload otherwise) and
// leaves the full payload of a cut result in the store; [Partial] tells such
// a result apart and [ResultFetcher.FullResult] fetches the rest.
//
// Beside the transcript, a store keeps what every request offered the
// model — its system prompt and the tool schemas it sent ([Request]) — each
// distinct one once, so that a replay of a stored conversation counts the
// whole of what the run sent.
package store
