package harness

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/agentharness/harness/internal/clearnote"

	"github.com/agentharness/harness/internal/toolschema"
)

// Origin says where a message of a [View] comes from in the transcript.
type Origin struct {
	// Turn and Round locate the message; both are 0 for the system prompt
	// and for notes.
	Turn, Round int
	// Result is the stored result behind a tool message (nil otherwise).
	// Policies read it; they never modify it.
	Result *ToolResult
	// Cuts lists what per-turn policies did to this message in this view.
	Cuts []Cut
}

// View is one request being built: the messages the model will be shown,
// where each comes from, and the tools offered. Per-turn policies
// ([ViewPolicy]) edit the view; the transcript behind it is never changed.
type View struct {
	Conversation *Conversation
	// Turn is the turn being answered; Round the index the next round will
	// get.
	Turn  *Turn
	Round int
	// Final is set when tools are withheld (the synthesis call).
	Final bool
	// KeepToolsOnFinal keeps the tool schemas in a final request (the
	// model is told it may not call them), so the request's prefix stays
	// the same as the turn's earlier requests and the prompt cache holds.
	// See Options.KeepToolsOnFinal.
	KeepToolsOnFinal bool
	// Messages and Origins are parallel slices.
	Messages []Message
	Origins  []Origin
	Tools    []ToolSpec
	// Stop, set by a policy on a non-final view, ends the turn's tool
	// rounds: the agent rebuilds the view as final and the turn's outcome
	// becomes Stop (for example Stuck). StopReason says why.
	Stop       Outcome
	StopReason string
	// whole indexes the call ids of tool messages shown whole (no view
	// cut); built by indexWhole before the view is shared with guards.
	whole map[string]bool

	// Overflow is set when the previous attempt at this request was
	// rejected as too large for the context window (ErrContextTooLarge):
	// compaction policies should compact to their target whatever their
	// trigger says.
	Overflow bool

	// Idle is how long the conversation was idle before this request: the
	// time since the engine last answered it, by Options.Now's clock (a
	// replay's clock reads the recorded times). For a conversation loaded from a store it is the time since
	// the newest stored round's response arrived (Round.Answered), for
	// every request of a turn; when that round was stored without the time
	// (an older harness), a turn's first request counts from the end of
	// the turn before and a later one gets 0 (unknown). A provider's
	// prompt cache expires after a few idle minutes, so after a long pause
	// rewriting old history breaks no cache that is still warm.
	Idle time.Duration

	// Spent sums what policies spent on their own model calls while
	// building this view (a compaction summary): a policy that calls a
	// model adds the reply's usage to it. The agent adds it to the turn's
	// usage (Result.PolicyUsage).
	Spent Usage
	// notes are the notes policies added (AddNote), for the engine to
	// record.
	notes []*Note
	// sent are the figures of the request Engine.Request built from the
	// view, computed once (plainStats reads every tool message).
	sent *RequestStats
}

// AddNote appends a note (a compaction summary or clearing mark) to the
// view's conversation, so this view's later policies and every later view
// see it, and leaves it for the engine to record (the Recorder's AddNote)
// once the policies are done.
func (v *View) AddNote(n *Note) {
	v.Conversation.Notes = append(v.Conversation.Notes, n)
	v.notes = append(v.notes, n)
}

// ViewPolicy edits a request view. Policies must be deterministic: the same
// transcript and options give the same view (this keeps prompt caches warm).
type ViewPolicy interface {
	ApplyView(ctx context.Context, v *View) error
}

// ViewPolicyFunc adapts a function to the ViewPolicy interface.
type ViewPolicyFunc func(ctx context.Context, v *View) error

// ApplyView calls f.
func (f ViewPolicyFunc) ApplyView(ctx context.Context, v *View) error { return f(ctx, v) }

// BuildView returns the base view of conv for the next request of turn: the
// system prompt, every turn's input (with its context messages, Turn.Context),
// assistant messages and the model's copy of every tool result, in order. The
// newest summary note (Conversation.Summary) stands in for the turns it
// covers; without one, a clearing mark puts a notice in its place that
// tells the model why some results are placeholders.
func BuildView(conv *Conversation, turn *Turn, system string, tools []ToolSpec, final bool) *View {
	v := &View{Conversation: conv, Turn: turn, Final: final, Tools: tools}
	if turn != nil {
		v.Round = len(turn.Rounds) + 1
	}
	skip, summary := 0, conv.Summary()
	if summary != nil {
		skip = summary.After
	}
	// Sized once (appending grew the slices a dozen times per view), with
	// room for the messages policies insert (a note message, a nudge).
	if size := viewSize(conv, skip); size > 0 || system != "" {
		v.Messages, v.Origins = make([]Message, 0, size+4), make([]Origin, 0, size+4)
	}
	if system != "" {
		v.add(Message{Role: RoleSystem, Parts: []Part{TextPart(system)}}, Origin{})
	}
	if n := summary; n != nil {
		v.add(Message{Role: RoleUser, Parts: []Part{TextPart(n.Text)}}, Origin{})
	} else if conv.Clears() {
		v.add(Message{Role: RoleUser, Parts: []Part{TextPart(clearnote.Text)}}, Origin{})
	}
	for _, t := range conv.Turns {
		if t.Index <= skip {
			continue
		}
		v.addInput(t)
		for _, r := range t.Rounds {
			v.add(r.Assistant, Origin{Turn: t.Index, Round: r.Index})
			for _, res := range r.Results {
				v.add(ToolMessage(res), Origin{Turn: t.Index, Round: r.Index, Result: res})
			}
		}
	}
	return v
}

// addInput adds turn t's user messages: its input, and each context
// message on the side of it the client sent it.
func (v *View) addInput(t *Turn) {
	o := Origin{Turn: t.Index}
	for _, c := range t.Context {
		if !c.AfterInput {
			v.add(Message{Role: RoleUser, Parts: []Part{TextPart(c.Text)}}, o)
		}
	}
	v.add(Message{Role: RoleUser, Parts: []Part{TextPart(t.Input)}}, o)
	for _, c := range t.Context {
		if c.AfterInput {
			v.add(Message{Role: RoleUser, Parts: []Part{TextPart(c.Text)}}, o)
		}
	}
}

// viewSize counts the transcript messages BuildView shows of conv's
// turns after skip.
func viewSize(conv *Conversation, skip int) int {
	n := 0
	for _, t := range conv.Turns {
		if t.Index <= skip {
			continue
		}
		n += 1 + len(t.Context)
		for _, r := range t.Rounds {
			n += 1 + len(r.Results)
		}
	}
	return n
}

func (v *View) add(m Message, o Origin) {
	v.Messages = append(v.Messages, m)
	v.Origins = append(v.Origins, o)
}

// ToolMessage is the tool message that shows the model its copy of res.
func ToolMessage(res *ToolResult) Message {
	return Message{
		Role:       RoleTool,
		Parts:      res.ModelParts(),
		ToolCallID: res.CallID,
		ToolName:   res.Tool,
		IsError:    res.IsError,
	}
}

// SentTools returns the tool schemas the request sends: none on a final
// request, unless KeepToolsOnFinal is set.
func (v *View) SentTools() []ToolSpec {
	if v.Final && !v.KeepToolsOnFinal {
		return nil
	}
	return v.Tools
}

// plainStats computes the figures of the view as it stands: what the request
// built from it sends.
func (v *View) plainStats() RequestStats { return v.stats(nil) }

// stats is plainStats, with the characters of each tool message's text taken
// from memo when it holds the same text at the same index (nil: counted).
func (v *View) stats(memo *charsMemo) RequestStats {
	sent := v.SentTools()
	s := RequestStats{Messages: len(v.Messages), Tools: len(sent)}
	if memo != nil {
		memo.mu.Lock()
		defer memo.mu.Unlock()
	}
	for i := range v.Messages {
		if m := &v.Messages[i]; m.Role == RoleTool {
			s.EvidenceChars += memo.chars(i, m)
		}
	}
	for _, t := range sent {
		s.ToolBytes += toolschema.Bytes(t.Name, t.Description, t.InputSchema)
	}
	return s
}

// charsMemo remembers the characters of the one-part texts of the tool
// messages of a conversation's last requests, by message index: a view
// rebuilt from the transcript shows the same strings at the same places,
// found by where their bytes are and how many (the entry keeps them
// alive, so the pair names one content) instead of counted again.
type charsMemo struct {
	mu sync.Mutex
	at []textChars
}

type textChars struct {
	p     *byte
	n     int
	chars int
}

// chars is utf8.RuneCountInString(m.Text()), from the memo when it has it. mu must be
// held; a nil memo counts.
func (cm *charsMemo) chars(i int, m *Message) int {
	if cm == nil || len(m.Parts) != 1 || m.Parts[0].Type != PartText {
		return utf8.RuneCountInString(m.Text())
	}
	t := m.Parts[0].Text
	p := unsafe.StringData(t)
	if i < len(cm.at) && cm.at[i].p == p && cm.at[i].n == len(t) {
		return cm.at[i].chars
	}
	n := utf8.RuneCountInString(t)
	if i >= len(cm.at) {
		cm.at = append(cm.at, make([]textChars, i+1-len(cm.at))...)
	}
	cm.at[i] = textChars{p, len(t), n}
	return n
}

// requestStats is the figures of the request built from the view: those
// Engine.Request computed, or plainStats when the view was not built by it.
func (v *View) requestStats() RequestStats {
	if v.sent != nil {
		return *v.sent
	}
	return v.plainStats()
}

// Request turns the view into a request. Its System is the text of the
// view's first message when that is the system prompt (BuildView puts it
// there), so the two are always one thing.
func (v *View) Request(maxOutput int) *Request {
	req := &Request{
		Messages:        v.Messages,
		MaxOutputTokens: maxOutput,
		Final:           v.Final,
		Round:           v.Round,
	}
	if v.Turn != nil {
		req.Turn = v.Turn.Index
	}
	req.Tools = v.SentTools()
	if len(v.Messages) > 0 && v.Messages[0].Role == RoleSystem && v.Origins[0].Turn == 0 {
		req.System = v.Messages[0].Text()
	}
	return req
}

// Replace replaces the content of message i with parts, recording cuts
// (what the policy did: a trim, a clear). Policies use it to trim or clear
// tool messages. Neither slice is copied, so a policy that shows the same
// replacement in every view (a placeholder rendered once) passes the same
// slices each time and rebuilding the view allocates nothing for it;
// neither may be modified afterwards. A message with no cuts yet shares
// cuts; one with cuts gets them appended.
func (v *View) Replace(i int, parts []Part, cuts ...Cut) error {
	if i < 0 || i >= len(v.Messages) {
		return fmt.Errorf("view: message %d out of range", i)
	}
	v.Messages[i].Parts = parts
	if o := &v.Origins[i]; len(o.Cuts) == 0 {
		o.Cuts = cuts[:len(cuts):len(cuts)]
	} else {
		o.Cuts = append(o.Cuts, cuts...)
	}
	return nil
}

// showsWhole reports whether the view shows the result of callID in full:
// its tool message is present and no policy trimmed or cleared it in this
// view. Guards that point the model at an earlier result (dedupe, collapse)
// use it on CallInfo.View, since a view-only trim is not in the transcript.
func (v *View) showsWhole(callID string) bool {
	if v.whole != nil {
		return v.whole[callID]
	}
	for i, m := range v.Messages {
		if m.Role == RoleTool && m.ToolCallID == callID && len(v.Origins[i].Cuts) == 0 {
			return true
		}
	}
	return false
}

// indexWhole builds the index showsWhole uses, so that concurrent calls
// only read the view.
func (v *View) indexWhole() {
	v.whole = make(map[string]bool)
	for i, m := range v.Messages {
		if m.Role == RoleTool && len(v.Origins[i].Cuts) == 0 {
			v.whole[m.ToolCallID] = true
		}
	}
}

// Insert puts m, with origin o, before message i (i == len(v.Messages)
// appends). Policies use it to add messages the transcript does not hold
// (a stuck nudge, a note) without editing Messages and Origins apart.
func (v *View) Insert(i int, m Message, o Origin) error {
	if i < 0 || i > len(v.Messages) {
		return fmt.Errorf("view: insert at %d out of range", i)
	}
	v.Messages = slices.Insert(v.Messages, i, m)
	v.Origins = slices.Insert(v.Origins, i, o)
	return nil
}

// Keep removes every message i for which keep(i) is false, keeping the
// order of the rest. keep is asked about every message before any is
// removed, so it sees the view as it was.
func (v *View) Keep(keep func(i int) bool) {
	kept := make([]bool, len(v.Messages))
	for i := range kept {
		kept[i] = keep(i)
	}
	n := 0
	for i := range v.Messages {
		if kept[i] {
			v.Messages[n], v.Origins[n] = v.Messages[i], v.Origins[i]
			n++
		}
	}
	clear(v.Messages[n:])
	clear(v.Origins[n:])
	v.Messages, v.Origins = v.Messages[:n], v.Origins[:n]
}
