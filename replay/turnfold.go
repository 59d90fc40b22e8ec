package replay

import "github.com/agentharness/harness"

// turnFold builds a recording's turns from its user-role messages the way
// a user counts turns. Clients such as Codex and Gemini CLI send, beside
// the user's prompt, messages of their own (their instructions, the
// environment, a skill's text) as separate user messages of the same
// request; imported one turn each, a session's first turns answered no
// request. Here a context message joins the turn of the prompt it
// precedes, or of the prompt it follows when no model call came between
// (Turn.Context keeps each as a message of its own, where it was sent).
// Only a prompt starts a turn, and so does context that a model call
// answers with no prompt after it (a compaction's summary, a warning the
// client adds between two calls): its last message is that turn's input,
// so every request is built from the same messages in the same order.
type turnFold struct {
	pending []string // context that no turn holds yet
	open    bool     // the last turn has a prompt and no model call yet
}

// input adds a user-role message to rec: a prompt (context false) or a
// message the client added.
func (f *turnFold) input(rec *Recording, text string, context bool) {
	switch {
	case !context:
		rec.Turns = append(rec.Turns, &Turn{Input: text, Context: f.take()})
		f.open = true
	case f.open:
		t := rec.Turns[len(rec.Turns)-1]
		t.Context = append(t.Context, harness.ContextMessage{Text: text, AfterInput: true})
	default:
		f.pending = append(f.pending, text)
	}
}

// call returns the turn a model call joins: the last one, after context
// that no prompt followed has become a turn of its own (and an empty turn
// when the recording has none).
func (f *turnFold) call(rec *Recording) *Turn {
	f.open = false
	f.flush(rec)
	if len(rec.Turns) == 0 {
		rec.Turns = append(rec.Turns, &Turn{})
	}
	return rec.Turns[len(rec.Turns)-1]
}

// end closes rec: context that nothing followed is a turn of its own, as
// context a call answers is. The fold then starts afresh.
func (f *turnFold) end(rec *Recording) {
	f.flush(rec)
	f.open = false
}

// flush makes the pending context a turn whose input is its last message.
func (f *turnFold) flush(rec *Recording) {
	ctx := f.take()
	if len(ctx) == 0 {
		return
	}
	t := &Turn{Input: ctx[len(ctx)-1].Text}
	if len(ctx) > 1 {
		t.Context = ctx[:len(ctx)-1]
	}
	rec.Turns = append(rec.Turns, t)
}

// take returns the pending context, before the input, and clears it.
func (f *turnFold) take() []harness.ContextMessage {
	if len(f.pending) == 0 {
		return nil
	}
	out := make([]harness.ContextMessage, len(f.pending))
	for i, s := range f.pending {
		out[i] = harness.ContextMessage{Text: s}
	}
	f.pending = f.pending[:0]
	return out
}
