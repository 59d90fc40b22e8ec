package store

import "time"

// Fork links a conversation to the one it was forked from: a proxy that
// sees a client send a history diverging from a stored conversation's
// keeps the divergent one as a new conversation that holds the shared
// turns again, and records where it came from.
type Fork struct {
	// Conversation is the fork's id; Parent the conversation it was
	// forked from.
	Conversation string `json:"conversation"`
	Parent       string `json:"parent"`
	// Turn and Round are the history's position where the fork diverged
	// from its parent (Round 0: the turn's input, else that round's
	// calls).
	Turn  int `json:"turn"`
	Round int `json:"round"`
	// SharedTurns counts the parent's turns the fork holds again.
	SharedTurns int `json:"shared_turns"`
	// Time is when the fork was made (zero when not known).
	Time time.Time `json:"time,omitzero"`
}
