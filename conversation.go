package harness

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"time"
)

// Outcome says how a turn ended.
type Outcome string

// The outcomes of a turn.
const (
	// Answered: the model answered without asking for tools.
	Answered Outcome = "answered"
	// RoundLimit: MaxRounds tool rounds were used; the answer comes from the
	// synthesis call made with tools withheld.
	RoundLimit Outcome = "round_limit"
	// Stuck: a stuck-loop policy stopped the tool rounds; the answer comes
	// from the synthesis call.
	Stuck Outcome = "stuck"
	// Cancelled: the context was cancelled.
	Cancelled Outcome = "cancelled"
	// Error: the loop could not go on (the model failed, the store failed).
	Error Outcome = "error"
)

// Conversation is the transcript: every turn, every round, every full
// result and the model's copy of it. It is what a store persists and what
// views are built from. A Conversation must not be used by two Runs at once.
type Conversation struct {
	ID    string  `json:"id"`
	Turns []*Turn `json:"turns"`
	// Notes are transcript-level messages added by policies, such as a
	// compaction summary; views place them where their After field says.
	Notes []*Note `json:"notes,omitempty"`

	// answered is when this process last turned a response of the
	// conversation into a round (Engine.Round), for View.Idle; a
	// conversation loaded from a store counts from its rounds' Answered.
	answered time.Time
}

// NewConversation returns an empty conversation. An empty id gets a random
// one.
func NewConversation(id string) *Conversation {
	if id == "" {
		id = newID("c")
	}
	return &Conversation{ID: id}
}

// newID returns prefix + "_" + 16 random hex digits.
func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}

// Turn is one user input and every model call made to answer it.
type Turn struct {
	// Index counts turns from 1.
	Index int    `json:"index"`
	Input string `json:"input"`
	// Context holds the user-role messages a client sent with Input, in
	// the turn's first request, that are not the user's words: a coding
	// agent's instructions (AGENTS.md), its environment, a skill's text.
	// Views show each as a user message of its own, where the client put
	// it (see ContextMessage), so a replay sends what the client sent;
	// they are part of the turn, not turns of their own, so turn-scoped
	// policies count the turn once. Replays of recorded clients set it
	// (replay.Turn.Context), and so does the proxy for the clients whose
	// context it tells apart (Claude Code, Codex, Gemini CLI); the agent
	// leaves it empty. The transcript stores (store/sqlite from schema 9,
	// store/postgres from 3) keep it: Load and LoadFull return it; turns
	// stored before have none.
	Context []ContextMessage `json:"context,omitempty"`
	Rounds  []*Round         `json:"rounds"`
	Outcome Outcome          `json:"outcome,omitempty"`
	// Usage is the turn's total: its rounds' usage plus what policies
	// spent on their own model calls (compaction summaries).
	Usage   Usage     `json:"usage"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"`
}

// ContextMessage is one user-role message of a turn's context
// ([Turn.Context]).
type ContextMessage struct {
	Text string `json:"text"`
	// AfterInput says the client sent it after the turn's input (Codex
	// puts a skill's instructions after the prompt that names the skill);
	// otherwise it precedes the input.
	AfterInput bool `json:"after_input,omitempty"`
}

// Answer is the text of the turn's last assistant message, or "".
func (t *Turn) Answer() string {
	if len(t.Rounds) == 0 {
		return ""
	}
	return t.Rounds[len(t.Rounds)-1].Assistant.Text()
}

// Round is one model call and the tool calls it made, with their results
// in call order. The last round of an answered turn has no calls.
type Round struct {
	// Index counts the rounds of a turn from 1.
	Index     int           `json:"index"`
	Assistant Message       `json:"assistant"`
	Results   []*ToolResult `json:"results,omitempty"`
	Usage     Usage         `json:"usage"`
	// Final is set on the synthesis call (tools withheld).
	Final bool `json:"final,omitempty"`
	// Stats describe the request that produced this round.
	Stats RequestStats `json:"stats"`
	// Dropped lists tool calls the model made on a final request, which
	// were not run because tools were withheld.
	Dropped []ToolCall `json:"dropped,omitempty"`
	// Answered is when the model's response arrived, on the engine's
	// clock (Options.Now): what View.Idle of a later request counts from
	// when the conversation is loaded from a store. Zero for rounds stored
	// before it was recorded.
	Answered time.Time `json:"answered,omitzero"`
}

// Note is what a policy adds to the transcript. It is one of two kinds:
//
//   - a summary (Text set) stands in the view for the turns up to and
//     including After: BuildView shows the newest summary's Text in their
//     place;
//   - a clearing mark (no Text, ClearTurn set) records that
//     views show the tool results of round (ClearTurn, ClearRound) and of
//     every earlier round as one-line placeholders. A mark never copies a
//     summary's text and stands in for no turns.
//
// Notes stored before the two kinds were told apart (a clearing note that
// carried the newest summary's Text and After, or the clearing notice) read as a
// summary that also clears, and views built from them are unchanged.
type Note struct {
	// After is the index of the last turn the note replaces in views.
	After int    `json:"after"`
	Text  string `json:"text"`
	By    string `json:"by"`
	// ClearTurn and ClearRound, set by a compaction policy that clears old
	// tool results (policy.CompactPolicy), mark the newest round it
	// cleared. The mark is recorded once, when the policy decides, so
	// every later view clears exactly the same results and the request
	// prefix stays cacheable. Zero clears nothing.
	ClearTurn  int `json:"clear_turn,omitempty"`
	ClearRound int `json:"clear_round,omitempty"`
}

// Summary returns the summary BuildView shows for c: of the notes with
// Text, the one with the largest After (the later of equals), or nil.
func (c *Conversation) Summary() *Note {
	var best *Note
	for _, n := range c.Notes {
		if n == nil || n.Text == "" {
			continue
		}
		if best == nil || n.After >= best.After {
			best = n
		}
	}
	return best
}

// Clears reports whether any note of c is a clearing mark.
func (c *Conversation) Clears() bool {
	for _, n := range c.Notes {
		if n != nil && n.ClearTurn > 0 {
			return true
		}
	}
	return false
}

// RequestStats are the figures of one request, computed from the request
// itself (never estimated).
type RequestStats struct {
	Messages int `json:"messages"`
	// EvidenceChars counts the characters of tool-result text the model is
	// shown in this request (every tool message in the view).
	EvidenceChars int `json:"evidence_chars"`
	// Tools and ToolBytes count the tool schemas sent and their bytes.
	Tools     int `json:"tools"`
	ToolBytes int `json:"tool_bytes"`
}

// snapshot returns a copy of c that later appends to c leave unchanged:
// the lists of turns and notes are copied, and running (the turn being
// run) is copied with its list of rounds. Rounds, results, notes and the
// other turns are shared: they do not change once appended.
func (c *Conversation) snapshot(running *Turn) *Conversation {
	s := &Conversation{ID: c.ID, Turns: slices.Clone(c.Turns), Notes: slices.Clone(c.Notes)}
	for i, t := range s.Turns {
		if t == running {
			cp := *t
			cp.Rounds = slices.Clone(t.Rounds)
			s.Turns[i] = &cp
		}
	}
	return s
}

// LastTurn returns the newest turn, or nil.
func (c *Conversation) LastTurn() *Turn {
	if len(c.Turns) == 0 {
		return nil
	}
	return c.Turns[len(c.Turns)-1]
}

// lastRound returns the newest round of c (the last round of the newest
// turn that has one), or nil.
func (c *Conversation) lastRound() *Round {
	for i := len(c.Turns) - 1; i >= 0; i-- {
		if t := c.Turns[i]; t != nil && len(t.Rounds) > 0 {
			return t.Rounds[len(t.Rounds)-1]
		}
	}
	return nil
}

// FindResult returns the stored result of a call id, searching newest
// first, or nil.
func (c *Conversation) FindResult(callID string) *ToolResult {
	for i := len(c.Turns) - 1; i >= 0; i-- {
		for j := len(c.Turns[i].Rounds) - 1; j >= 0; j-- {
			for _, r := range c.Turns[i].Rounds[j].Results {
				if r.CallID == callID {
					return r
				}
			}
		}
	}
	return nil
}
