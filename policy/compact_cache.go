package policy

import (
	"slices"
	"sync"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/locator"
	"github.com/agentharness/harness/internal/promptunit"
)

// placeholderCache remembers, per conversation, what clearing each stored
// result means (see resultItem), so a view rebuilt every round shows the
// very strings and cuts of the round before: the token counter then finds
// them by identity (tokens.Cache) instead of rendering and counting them
// again, and reproducing a clear costs a lookup per cleared result, with
// nothing allocated, however many results were cleared before it. A
// placeholder depends only on the stored result, its call's arguments,
// whether it names the recall tool and, when the policy's rule read what
// the agent quoted, the mark that was read up to, so an entry is used only
// when all four are what they were. At most placeholderConversations
// conversations are kept. Safe for concurrent use.
type placeholderCache struct {
	mu    sync.Mutex
	convs map[*harness.Conversation]*resultItems
}

// placeholderConversations bounds the conversations a placeholderCache
// keeps.
const placeholderConversations = 256

// resultItems are one conversation's entries. mu is held for a whole
// compaction pass, so two views of one conversation built at once take
// turns.
type resultItems struct {
	mu    sync.Mutex
	byRes map[*harness.ToolResult]*resultItem
	// at is the entry of each message index of the last views: a view
	// rebuilt from the transcript has each result where the last one had
	// it, so most lookups compare a pointer instead of hashing one.
	at []*resultItem
	// rounds is chooseMark's buffer, reused by every pass.
	rounds []compactPos
	// words remembers roundWords of the conversation's rounds: a round's
	// assistant message never changes.
	words map[*harness.Round][]string
	// active is the working-set rule's memory (nil until asked).
	active *activeState
	// pass counts the compaction passes; an entry checked against its
	// call in this pass is not checked again.
	pass int
}

// resultItem is what clearing one stored result means.
type resultItem struct {
	res     *harness.ToolResult
	checked int // the pass that last found it current
	args    []byte
	hasArg  bool
	recall  bool
	// quoted: the rule read what the agent quoted, up to horizon (see
	// ClearCandidate.Quoted), so the entry holds only while that is the
	// result's horizon.
	quoted  bool
	horizon compactPos
	// take is the policy's rule's answer (see ClearRule.Clear).
	take bool
	// clearable records compaction.clearable (-1 unknown, 0 no, 1 yes).
	clearable int8
	text      string
	// parts shows text (one text part), shared by every view.
	parts []harness.Part
	// tokens counts the tool message showing text (0: not yet counted).
	tokens int
	// stored is 1 + the tokens of the stored result's message (0: not yet
	// counted; see compaction.storedTokens).
	stored int
	// cut is the clear's cut for a message of cutIn bytes (nil: none
	// made yet), shared by every view: it has no room to append in place.
	cut   []harness.Cut
	cutIn int
}

// open returns conv's entries, locked until their release is called.
func (pc *placeholderCache) open(conv *harness.Conversation) (*resultItems, func()) {
	pc.mu.Lock()
	ri := pc.convs[conv]
	if ri == nil {
		if pc.convs == nil || len(pc.convs) >= placeholderConversations {
			pc.convs = map[*harness.Conversation]*resultItems{}
		}
		ri = &resultItems{byRes: map[*harness.ToolResult]*resultItem{}}
		pc.convs[conv] = ri
	}
	pc.mu.Unlock()
	ri.mu.Lock()
	ri.pass++
	return ri, ri.mu.Unlock
}

// lookup returns the entry of res, shown by message i, or nil: the
// caller checks that it was rendered as it would render it now.
func (ri *resultItems) lookup(i int, res *harness.ToolResult) *resultItem {
	if i < len(ri.at) && ri.at[i] != nil && ri.at[i].res == res {
		return ri.at[i]
	}
	return ri.byRes[res]
}

// place makes it the entry of message i, found current in this pass.
func (ri *resultItems) place(i int, it *resultItem) {
	if i >= len(ri.at) {
		ri.at = append(ri.at, make([]*resultItem, i+1-len(ri.at))...)
	}
	ri.at[i] = it
	it.checked = ri.pass
}

// current returns the entry of message i when this pass already found it
// current for res (the call cannot change within a pass), or nil; the
// caller checks its horizon.
func (ri *resultItems) current(i int, res *harness.ToolResult) *resultItem {
	if i < len(ri.at) {
		if it := ri.at[i]; it != nil && it.res == res && it.checked == ri.pass {
			return it
		}
	}
	return nil
}

// cutFor returns the cut of clearing a message of in bytes to the
// placeholder, made once per size.
func (it *resultItem) cutFor(in int, res *harness.ToolResult) []harness.Cut {
	if it.cut == nil || it.cutIn != in {
		it.cut = []harness.Cut{{Kind: harness.CutCleared, By: compactName, BytesIn: in, BytesOut: len(it.text), Locator: locator.Spill(res)}}
		it.cutIn = in
	}
	return it.cut
}

// measureMemo keeps, per conversation, the messages of the last view the
// policy measured and their token counts, so that the next view counts
// only what changed: a view rebuilt from the transcript repeats the last
// one's messages (sharing their memory, so comparing them is cheap) and
// adds the newest round's at its end, or shifts them by one when a note
// message appears. A count is reused only for a message a provider would
// serialize alike (promptunit.SameMessage: role, ids, every part and call), so
// it is exactly the count CountMessage would give. At most
// measureMemoConversations conversations are kept. Safe for concurrent use
// on different conversations.
type measureMemo struct {
	mu    sync.Mutex
	convs map[*harness.Conversation]*measured
}

// measureMemoConversations bounds the conversations a measureMemo keeps.
const measureMemoConversations = 256

// measured is one conversation's last measured view, and the buffers of
// the one before (spare), which the next view is measured into so that a
// request copies the view's messages without allocating.
type measured struct {
	msgs  []harness.Message
	raw   []int
	spare *measured
}

// counts returns the token count of each of msgs, reusing the counts of
// the conversation's last measured view, and remembers msgs (a copy: the
// view's slice is edited afterwards) for the next.
func (mm *measureMemo) counts(conv *harness.Conversation, msgs []harness.Message, count func(*harness.Message) int) []int {
	mm.mu.Lock()
	prev := mm.convs[conv]
	next := &measured{}
	if prev != nil && prev.spare != nil {
		// Taken: a view of the conversation measured at the same time
		// makes its own.
		next, prev.spare = prev.spare, nil
	}
	mm.mu.Unlock()
	next.raw = slices.Grow(next.raw[:0], len(msgs))[:len(msgs)]
	d := 0 // msgs[i] is expected at prev.msgs[i-d]
	for i := range msgs {
		if prev != nil {
			if j, ok := prev.find(&msgs[i], i, &d); ok {
				next.raw[i] = prev.raw[j]
				continue
			}
		}
		next.raw[i] = count(&msgs[i])
	}
	if len(next.msgs) > len(msgs) {
		clear(next.msgs[len(msgs):]) // hold no message of a longer view
	}
	next.msgs = append(next.msgs[:0], msgs...)
	raw := slices.Clone(next.raw)
	mm.mu.Lock()
	if mm.convs == nil || (len(mm.convs) >= measureMemoConversations && mm.convs[conv] == nil) {
		mm.convs = map[*harness.Conversation]*measured{}
	}
	if prev != nil && mm.convs[conv] == prev {
		prev.spare = nil
		next.spare = prev
	}
	mm.convs[conv] = next
	mm.mu.Unlock()
	return raw
}

// find looks m up at the expected place of the last view, then one place
// either side (a note message inserted or removed before it), and moves
// the expected shift d to where it was found.
func (p *measured) find(m *harness.Message, i int, d *int) (int, bool) {
	for _, nd := range [...]int{*d, *d + 1, *d - 1} {
		if j := i - nd; j >= 0 && j < len(p.msgs) && promptunit.SameMessage(m, &p.msgs[j]) {
			*d = nd
			return j, true
		}
	}
	return 0, false
}
