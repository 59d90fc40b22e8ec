package store

import (
	"context"
	"time"
)

// Saving is what a proxy saved on one model call it forwarded: the tokens
// its cuts removed from the request, with what is needed to price and
// group them. It holds no content of the conversation: names, counts and
// the client's working directory.
type Saving struct {
	// At is when the upstream's answer was relayed.
	At time.Time `json:"at"`
	// Conversation is the proxy's conversation id.
	Conversation string `json:"conversation"`
	// Client names the agent that sent the call (claude-code, codex,
	// gemini-cli, opencode, or the wire format when unknown); Project is
	// its working directory ("" when the request does not say).
	Client  string `json:"client"`
	Project string `json:"project,omitempty"`
	// Model is the model the request named.
	Model string `json:"model"`
	// BytesIn and BytesOut are the request's size as sent by the client
	// and as forwarded.
	BytesIn  int64 `json:"bytes_in"`
	BytesOut int64 `json:"bytes_out"`
	// TokensSaved counts the tokens the proxy's cuts removed from the
	// request (what it replaced, minus what it put in their place).
	TokensSaved int64 `json:"tokens_saved"`
	// Input, Cached and Output are the usage the upstream reported for
	// the call (zero when it reported none).
	Input  int64 `json:"input"`
	Cached int64 `json:"cached"`
	Output int64 `json:"output"`
}

// SavingsLog is implemented by stores that keep a proxy's savings
// (store/sqlite, store/postgres). Savings are kept apart from the
// conversations: deleting a conversation leaves what was saved on it.
type SavingsLog interface {
	// AddSaving stores one call's saving.
	AddSaving(ctx context.Context, s Saving) error
	// Savings returns the savings stored at or after since (every one
	// for the zero time), oldest first.
	Savings(ctx context.Context, since time.Time) ([]Saving, error)
}
