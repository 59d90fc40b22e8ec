package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/agentharness/harness"
)

// ErrNotFound is returned (wrapped) when a conversation or a call id is not
// in the store.
var ErrNotFound = errors.New("not found in the transcript store")

// ErrConversationBusy is returned (wrapped) when a conversation cannot be
// written because another turn of it is being recorded, by this process or
// another (another Store on the same database): one conversation is never
// written by two turns at once, since recording both would interleave two
// histories, each request missing the other's rounds. The message says who
// holds it where the store knows (SQLite names the holder's pid and host).
// The caller may retry once that turn has ended, after loading the
// conversation again (the other turn changed it), or continue in another
// conversation.
var ErrConversationBusy = errors.New("another turn of the conversation is being recorded")

// ErrTurnEnded is returned (wrapped) by [TurnResumer.ResumeTurn] for a
// turn that cannot be continued: it ended with an outcome of its own, or a
// later turn of the conversation has begun since.
var ErrTurnEnded = errors.New("the turn has ended")

// Interrupted is the outcome a store gives a turn whose writer died (or
// went silent past its lease) before ending it, when another writer takes
// the conversation over. The turn's rounds stored so far are kept; the
// round in flight was never stored. No outcome of harness's own is
// Interrupted, so a turn that has it was ended by a takeover, never by its
// writer; [TurnResumer.ResumeTurn] may reopen it.
const Interrupted harness.Outcome = "interrupted"

// TurnResumer is implemented by stores whose turns may be continued by
// another Store than the one that began them: a turn owned by something
// that outlives one process (a durable workflow), whose next step runs in
// another worker after the first one died.
type TurnResumer interface {
	// ResumeTurn makes this Store the writer of turn, which must be the
	// last stored turn of conv (same index and input): it claims the
	// conversation as BeginTurn does, taking it over from a holder that is
	// gone, and refuses it with ErrConversationBusy while another live
	// writer holds it. A turn that a takeover marked Interrupted is
	// reopened (its outcome and end time cleared, its rounds kept), in the
	// same transaction as the claim, so no reader sees it ended and then
	// open; turn.Outcome and turn.Ended are cleared to match. A turn that
	// ended otherwise, or that a later turn follows, is refused with
	// ErrTurnEnded. Resuming a turn this Store holds already is allowed
	// (any Turn of that index; see BeginTurn). The turn's later writes
	// (AddRound, AddNote, EndTurn) then go on as if this Store had begun
	// it.
	ResumeTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error
	// SuspendTurn gives up this Store's claim on the conversation of
	// turn, which it holds (BeginTurn, ResumeTurn), and leaves the turn
	// open: the next writer, this Store or another, resumes it at once
	// with ResumeTurn, and nothing marks it Interrupted. A durable turn's
	// steps suspend it when they are done, so that its next step may run
	// on any live worker. While suspended, the conversation is held by no
	// one: a writer that begins another turn meanwhile makes ResumeTurn
	// refuse the suspended one (ErrTurnEnded). It does nothing when this
	// Store does not hold turn.
	SuspendTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error
}

// Store persists conversations. Implementations are safe for concurrent use;
// runs on different conversations may record at the same time.
type Store interface {
	// Recorder lets the store record a run as it goes
	// (harness.Options.Recorder), with the notes view policies add and
	// the system prompt and tool schemas of every request (the
	// recorder's optional AddNote and AddRequest).
	harness.Recorder
	AddNote(ctx context.Context, conv *harness.Conversation, note *harness.Note) error
	AddRequest(ctx context.Context, conv *harness.Conversation, turn *harness.Turn, req *harness.Request) error
	ResultFetcher

	// Observe stores one event; harness.Observer(s.Observe) is an event
	// sink for harness.Options.Observer. Observers cannot fail, so
	// implementations report write errors by other means ([DB.EventErr]).
	// A turn's harness.EventTurnEnd is stored once, as its end is: a later
	// copy (emitted again by a driver that retried a failed end write) is
	// dropped.
	Observe(e harness.Event)

	// Load returns a stored conversation ready to be continued by
	// Agent.Run. It loads what views use: the model's copy of every result
	// a guard cut (whose full payload stays in the store, see [Partial])
	// and the full payload of every other result.
	Load(ctx context.Context, id string) (*harness.Conversation, error)
	// LoadFull returns a stored conversation with every full payload.
	LoadFull(ctx context.Context, id string) (*harness.Conversation, error)
	// Requests returns what each stored round's request offered (system
	// prompt and tool schemas), one per round in order; turn 0 means every
	// turn. A conversation is loaded without them (a harness.Conversation
	// has no place for them); a resumed run sends its own.
	Requests(ctx context.Context, convID string, turn int) ([]Request, error)
	// List describes every stored conversation, most recently updated
	// first. It never reads result payloads.
	List(ctx context.Context) ([]Summary, error)
	// Delete removes a conversation and everything stored with it.
	Delete(ctx context.Context, id string) error

	// Calls returns the tool calls of a conversation with what each
	// returned and what the model saw of it; turn 0 means every turn.
	Calls(ctx context.Context, convID string, turn int) ([]CallRecord, error)
	// Events returns the stored events of a conversation in the order
	// they were stored; turn 0 means every turn.
	Events(ctx context.Context, convID string, turn int) ([]harness.Event, error)

	// AddFork records that a conversation was forked from another
	// (at most one link per fork: a later one for the same fork is
	// dropped). The conversation need not be stored yet.
	AddFork(ctx context.Context, f Fork) error
	// Forks returns the fork links of conversation conv (none when it is
	// no fork), or of every stored fork when conv is "".
	Forks(ctx context.Context, conv string) ([]Fork, error)
	// AddDecisions records decisions made for results of conversation
	// conv, in one transaction. The conversation need not be stored yet.
	AddDecisions(ctx context.Context, conv string, ds []Decision) error
	// Decisions returns the decisions recorded for conv, in the order
	// they were recorded.
	Decisions(ctx context.Context, conv string) ([]Decision, error)

	// Close releases the store.
	Close() error
}

// ResultFetcher fetches one stored result with its full payload. It is all
// the recall tool needs from a store.
type ResultFetcher interface {
	// FullResult returns the full stored result of callID in conversation
	// convID (the newest, if a model reused a call id in two rounds).
	FullResult(ctx context.Context, convID, callID string) (*harness.ToolResult, error)
}

// Summary describes one stored conversation.
type Summary struct {
	ID string `json:"id"`
	// Title is the first line of the first turn's input, shortened.
	Title   string    `json:"title"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	Turns   int       `json:"turns"`
	Rounds  int       `json:"rounds"`
	Calls   int       `json:"calls"`
	// ResultBytes sums the full payloads of the tool results; ModelBytes
	// what the per-call guards let the model see of them.
	ResultBytes int64 `json:"result_bytes"`
	ModelBytes  int64 `json:"model_bytes"`
	// Usage sums the usage of every model call.
	Usage harness.Usage `json:"usage"`
	Notes int           `json:"notes"`
}

// CallRecord is one tool call as stored: what the tool returned, what the
// per-call guards made of it, and what per-turn policies showed of it in
// each request.
type CallRecord struct {
	Turn  int `json:"turn"`
	Round int `json:"round"`
	// Seq is the call's position in its round, from 1.
	Seq      int             `json:"seq"`
	CallID   string          `json:"call_id"`
	Tool     string          `json:"tool"`
	Args     json.RawMessage `json:"args,omitempty"`
	IsError  bool            `json:"is_error,omitempty"`
	TimedOut bool            `json:"timed_out,omitempty"`
	// FullBytes and FullChars measure the full payload.
	FullBytes int `json:"full_bytes"`
	FullChars int `json:"full_chars"`
	// ModelBytes and ModelChars measure the model's copy after the guards.
	ModelBytes int `json:"model_bytes"`
	ModelChars int `json:"model_chars"`
	// Cuts are the guards' cuts of the model copy, outermost last.
	Cuts []harness.Cut `json:"cuts,omitempty"`
	// Marker holds the lines of the model copy that are not in the full
	// payload: the markers a guard added (empty when nothing was cut).
	Marker string `json:"marker,omitempty"`
	// Views lists the per-turn trims of this result, one per request.
	Views []ViewCut `json:"views,omitempty"`
}

// ViewCut is what a per-turn policy (turn budget, compaction) did to one
// result in one request. The stored result is never changed by it.
type ViewCut struct {
	// Turn and Request locate the request: the turn and the index of the
	// round that request produced.
	Turn    int `json:"turn"`
	Request int `json:"request"`
	harness.Cut
	// SizeIn and SizeOut are the sizes before and after, in Unit
	// ("chars" or "tokens"), when the policy reported them.
	SizeIn  int    `json:"size_in,omitempty"`
	SizeOut int    `json:"size_out,omitempty"`
	Unit    string `json:"unit,omitempty"`
	// Marker is the marker the policy appended, when it reported it.
	Marker string `json:"marker,omitempty"`
}
