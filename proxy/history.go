package proxy

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/agentharness/harness"
)

// A wire format reads a request body into a flat list of items in history
// order; buildHistory turns that list into the transcript's shape (turns of
// rounds, each round an assistant message and the results of its calls),
// so the four formats share one notion of turn, round and result.

// itemKind says what one history item is.
type itemKind int

const (
	// itemUser is a user message that carries no tool result: the start of
	// a turn (consecutive ones form one turn's input).
	itemUser itemKind = iota
	// itemAssistant is an assistant message (consecutive ones, as the
	// Responses API sends a message and its function calls, form one).
	itemAssistant
	// itemResult is one tool result.
	itemResult
	// itemSystem is a system or developer message inside the history: part
	// of the conversation's key and system prompt, not of a turn.
	itemSystem
)

// piece is one part of a user item (item.Pieces).
type piece struct {
	Text    string
	Context bool
}

// item is one entry of a request's history.
type item struct {
	Kind  itemKind
	Text  string             // user input, assistant text
	Calls []harness.ToolCall // of an assistant message
	// Pieces splits a user item into what the client adds beside the
	// user's words (internal/clientctx: its turn's Context) and the words,
	// part by part, consecutive words joined (Gemini CLI sends its session
	// context and the prompt as parts of one content; Codex a message of
	// context alone, one piece); nil when it is all the user's words.
	// Text stays the whole, which keys the conversation as before.
	Pieces []piece
	// Result is set on an itemResult.
	Result *parsedResult
}

// parsedResult is one tool result as the client sent it, read when its
// history element is parsed. It never changes afterwards: a later request
// that carries the element byte for byte shares it (walkBody), and its
// spans hold for that request's body too.
type parsedResult struct {
	CallID  string
	IsError bool
	// Decode returns the result's content in body (the request's) as the
	// model reads it; ok is false when the content holds anything but
	// text (an image), which the proxy passes through unchanged. It is
	// called only for a result the proxy has not decided yet, so a long
	// history costs no decoding.
	Decode func(body []byte) (text string, ok bool)
	// Content is the span of the JSON value the proxy may replace.
	Content span
	// Encode returns the JSON value that replaces Content for a model
	// copy of text.
	Encode func(text string) []byte
	// NoErrorFlag is set when the format carries no error flag on a
	// result (the Responses API), so IsError says nothing.
	NoErrorFlag bool
	// sum is the maphash of the content's bytes under the proxy's seed,
	// set once by request.hash before the parse is shared.
	sum uint64
}

// wireResult is one tool result of one request: what the client sent,
// and where this request's history puts it.
type wireResult struct {
	*parsedResult

	// Filled in by buildHistory: the call this result answers.
	Tool string
	Args json.RawMessage
	// Turn and Round locate the round whose call this answers (from 1).
	Turn, Round int
	// Message is the assistant message that made the call.
	Message *harness.Message
	// dec is the result's decision, once the proxy has it.
	dec *decision
}

// request is what the proxy reads from one request body.
type request struct {
	Model  string
	Stream bool
	// System is the raw system prompt value and Tools the raw tool list
	// (decoded only when a round is stored).
	System, Tools json.RawMessage
	// toolsAt is the span of the tools array in the body (empty when the
	// body has none), which Options.DeferTools rewrites.
	toolsAt span
	// Seed holds the system prompt's text (in pieces); with the model and
	// the first user input it identifies the conversation. Text, not
	// bytes: clients move cache_control markers from message to message.
	Seed [][]byte
	// Key is an explicit conversation key the format carries (the
	// Responses API's prompt_cache_key), "" when none.
	Key string
	// Session is the client's own name for its session when the body
	// carries one (Claude Code's metadata.user_id), "" when none: with
	// the model and the first user input's words it keys the
	// conversation in place of the system prompt and the first input's
	// context, which such a client re-makes when the session is resumed
	// (see conversationID).
	Session string
	// PrevResponse is the answer a Responses request continues
	// (previous_response_id), and Stored the upstream conversation it
	// adds to (its "conversation"), "" when it carries its whole history.
	PrevResponse, Stored string
	// Elems are the spans of the history's elements in the body, for the
	// cache-break check.
	Elems []span
	// Items may be shared with later requests' parses (walkBody): they
	// are never changed once parsed.
	Items []item
	// Reused counts the leading elements taken from the previous request's
	// parse (see walkBody).
	Reused int
	// elemSums holds the maphash of each element's bytes (request.hash),
	// taken from the previous request's parse for the reused ones.
	elemSums []uint64

	// buf holds body for the proxy's kept parses (bodybuf.go).
	buf *bodyBuf
	// body is the parsed body; histStart the offset of the history array;
	// elemItems[i] the number of items after element i.
	body      []byte
	histStart int
	elemItems []int
}

// side reports whether the request offers no tools: a client's side
// request about its conversation (a summary, a title, a classifier such
// as Gemini CLI's router) rather than a round of it, whose answers the
// client does not keep in its history.
func (r *request) side() bool {
	t := bytes.TrimSpace(r.Tools)
	return len(t) == 0 || bytes.Equal(t, []byte("[]")) || bytes.Equal(t, []byte("null"))
}

// seed returns the pieces of the system prompt that key the conversation:
// the format's system member and the system messages of the history.
func (r *request) seed() [][]byte {
	out := r.Seed
	for _, it := range r.Items {
		if it.Kind == itemSystem {
			out = append(out[:len(out):len(out)], []byte(it.Text))
		}
	}
	return out
}

// history is a request's history in the transcript's shape.
type history struct {
	Turns   []*histTurn
	Results []*wireResult
	// first is the first user item, part of the conversation key: its
	// pieces tell the user's words from the context the client adds (see
	// conversationID).
	first *item
}

type histTurn struct {
	// Input joins the turn's user items that are the user's words;
	// Context holds the others (harness.Turn.Context), in order.
	Input   string
	Context []harness.ContextMessage
	Rounds  []*histRound
	// prompt is set once an item of the user's words joined Input.
	prompt bool
}

// add puts a user item into the turn: a context item into Context (after
// the input when one came before it), any other into Input.
func (t *histTurn) add(it *item) {
	if it.Pieces == nil {
		t.addText(it.Text, false)
		return
	}
	for _, p := range it.Pieces {
		t.addText(p.Text, p.Context)
	}
}

func (t *histTurn) addText(text string, context bool) {
	if context {
		t.Context = append(t.Context, harness.ContextMessage{Text: text, AfterInput: t.prompt})
		return
	}
	t.Input, t.prompt = joinInput(t.Input, text), true
}

// settle gives a turn whose user items are all context an input: the
// last of them, as the replay's importers do, so the proxy's record and
// an import of the client's own history agree.
func (t *histTurn) settle() {
	if t.prompt || len(t.Context) == 0 {
		return
	}
	last := t.Context[len(t.Context)-1]
	t.Input, t.Context, t.prompt = last.Text, t.Context[:len(t.Context)-1], true
	if len(t.Context) == 0 {
		t.Context = nil
	}
}

// harnessTurn is the turn as the transcript holds it, with no rounds.
func (t *histTurn) harnessTurn(index int) *harness.Turn {
	return &harness.Turn{Index: index, Input: t.Input, Context: t.Context}
}

type histRound struct {
	Assistant harness.Message
	Results   []*wireResult
	// index counts the turn's rounds from 1.
	index int
}

// buildHistory groups items into turns and rounds. A user item starts a
// turn unless the current turn has no round yet (then it joins the turn:
// its input, or its context when the client added it); an assistant item
// starts a round; a result joins the round whose call it answers, or the
// latest round. The conversation's first user item keys it (first),
// context or not, as before context was told apart.
func buildHistory(items []item) *history {
	h := &history{}
	var turn *histTurn
	var round *histRound
	lastAssistant := false
	// One allocation each for the rounds and the results: a long history
	// would otherwise cost one per element.
	nRounds, nResults := countKinds(items)
	rounds := make([]histRound, 0, nRounds)
	results := make([]wireResult, 0, nResults)
	h.Results = make([]*wireResult, 0, nResults)
	for i := range items {
		it := &items[i]
		switch it.Kind {
		case itemUser:
			lastAssistant = false
			if h.firstUser() == "" {
				h.first = it
			}
			if turn != nil && len(turn.Rounds) == 0 {
				turn.add(it)
				continue
			}
			turn = &histTurn{}
			turn.add(it)
			h.Turns = append(h.Turns, turn)
			round = nil
		case itemAssistant:
			if turn == nil {
				turn = &histTurn{}
				h.Turns = append(h.Turns, turn)
			}
			if lastAssistant && round != nil {
				mergeAssistant(&round.Assistant, it)
				continue
			}
			rounds = append(rounds, histRound{Assistant: harness.Message{Role: harness.RoleAssistant}, index: len(turn.Rounds) + 1})
			round = &rounds[len(rounds)-1]
			mergeAssistant(&round.Assistant, it)
			turn.Rounds = append(turn.Rounds, round)
			lastAssistant = true
		case itemResult:
			lastAssistant = false
			results = append(results, wireResult{parsedResult: it.Result})
			r := &results[len(results)-1]
			// Results follow the round that made their calls; only a call
			// id that round does not hold is looked up further back (ids
			// repeat when a format has none and the function name stands in).
			owner := round
			if !hasCall(round, r.CallID) {
				if o := findCall(turn, r.CallID); o != nil {
					owner = o
				}
			}
			if owner == nil {
				// A result with no call before it: keep it findable for
				// the rewrite, with no round to record it in.
				h.Results = append(h.Results, r)
				continue
			}
			r.Turn = len(h.Turns)
			r.Round = owner.index
			r.Message = &owner.Assistant
			for _, c := range owner.Assistant.ToolCalls {
				if c.ID == r.CallID {
					r.Tool, r.Args = c.Name, c.Args
				}
			}
			owner.Results = append(owner.Results, r)
			h.Results = append(h.Results, r)
		}
	}
	for _, t := range h.Turns {
		t.settle()
	}
	return h
}

// countKinds counts the assistant items (at least as many as the rounds
// they make) and the results of items.
func countKinds(items []item) (assistants, results int) {
	for i := range items {
		switch items[i].Kind {
		case itemAssistant:
			assistants++
		case itemResult:
			results++
		}
	}
	return assistants, results
}

func joinInput(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "\n\n" + b
}

func mergeAssistant(m *harness.Message, it *item) {
	if it.Text != "" {
		m.Parts = append(m.Parts, harness.TextPart(it.Text))
	}
	if m.ToolCalls == nil {
		// The item's calls, shared: neither is ever changed, and a
		// later merge appends to a copy (the slice is clipped).
		m.ToolCalls = slices.Clip(it.Calls)
		return
	}
	m.ToolCalls = append(m.ToolCalls, it.Calls...)
}

// findCall returns the round of turn whose message made the call id.
func findCall(turn *histTurn, id string) *histRound {
	if turn == nil || id == "" {
		return nil
	}
	for i := len(turn.Rounds) - 1; i >= 0; i-- {
		for _, c := range turn.Rounds[i].Assistant.ToolCalls {
			if c.ID == id {
				return turn.Rounds[i]
			}
		}
	}
	return nil
}

func hasCall(r *histRound, id string) bool {
	if r == nil {
		return false
	}
	for _, c := range r.Assistant.ToolCalls {
		if c.ID == id {
			return true
		}
	}
	return false
}

// userItem is a user content of text parts that a classifier may tell
// the client's context in: an item of Pieces when some part is.
func userItem(texts []string, isContext func(string) bool) item {
	it := item{Kind: itemUser, Text: textOf(texts)}
	var words []string
	for _, s := range texts {
		if !isContext(s) {
			words = append(words, s)
			continue
		}
		if len(words) > 0 {
			it.Pieces = append(it.Pieces, piece{Text: textOf(words)})
			words = nil
		}
		it.Pieces = append(it.Pieces, piece{Text: s, Context: true})
	}
	if len(it.Pieces) > 0 && len(words) > 0 {
		it.Pieces = append(it.Pieces, piece{Text: textOf(words)})
	}
	return it
}

// textOf joins text blocks the way a model reads them.
func textOf(texts []string) string { return strings.Join(texts, "\n") }
