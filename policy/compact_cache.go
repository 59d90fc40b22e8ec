package policy

import (
	"bytes"
	"slices"
	"sync"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/tokens"
)

// placeholderCache remembers the placeholder of each cleared result (and
// the tokens of the message showing it), so a
// view rebuilt every round shows the very string of the round before: the
// token counter then finds it by identity (tokens.Cache) instead of
// rendering and counting it again, and a clear's cost does not grow with
// the number of results cleared before it. A placeholder depends only on
// the stored result, its call's arguments and whether it names the recall
// tool, so an entry is used only when all three are what they were.
// Entries live in two generations (see tokens.Cache), so memory stays
// bounded when one policy serves many conversations. Safe for concurrent
// use.
type placeholderCache struct {
	mu       sync.Mutex
	cur, old map[*harness.ToolResult]placeholderEntry
}

type placeholderEntry struct {
	args   []byte
	hasArg bool
	recall bool
	text   string
	// tokens counts the tool message showing text (0: not yet counted).
	tokens int
}

// placeholderCacheSize bounds each generation.
const placeholderCacheSize = 4096

// get returns the cached placeholder of res rendered with args (hasArg:
// the call is known) and recall, and whether there is one.
func (pc *placeholderCache) get(res *harness.ToolResult, args []byte, hasArg, recall bool) (string, bool) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	e, ok := pc.cur[res]
	if !ok {
		if e, ok = pc.old[res]; ok {
			pc.putLocked(res, e)
		}
	}
	if !ok || e.hasArg != hasArg || e.recall != recall || !bytes.Equal(e.args, args) {
		return "", false
	}
	return e.text, true
}

// put remembers text as the placeholder of res rendered with args and
// recall.
func (pc *placeholderCache) put(res *harness.ToolResult, args []byte, hasArg, recall bool, text string) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.putLocked(res, placeholderEntry{args: args, hasArg: hasArg, recall: recall, text: text})
}

// tokens returns the remembered count of res's placeholder message, when
// the placeholder is cached for args and recall and was counted.
func (pc *placeholderCache) tokens(res *harness.ToolResult, args []byte, hasArg, recall bool) (int, bool) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	e, ok := pc.cur[res]
	if !ok || e.hasArg != hasArg || e.recall != recall || !bytes.Equal(e.args, args) || e.tokens == 0 {
		return 0, false
	}
	return e.tokens, true
}

// setTokens remembers n as the count of res's cached placeholder message.
func (pc *placeholderCache) setTokens(res *harness.ToolResult, args []byte, hasArg, recall bool, n int) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if e, ok := pc.cur[res]; ok && e.hasArg == hasArg && e.recall == recall && bytes.Equal(e.args, args) {
		e.tokens = n
		pc.cur[res] = e
	}
}

func (pc *placeholderCache) putLocked(res *harness.ToolResult, e placeholderEntry) {
	if pc.cur == nil || len(pc.cur) >= placeholderCacheSize {
		pc.old, pc.cur = pc.cur, make(map[*harness.ToolResult]placeholderEntry)
	}
	pc.cur[res] = e
}

// measureMemo keeps, per conversation, the messages of the last view the
// policy measured and their token counts, so that the next view counts
// only what changed: a view rebuilt from the transcript repeats the last
// one's messages (sharing their memory, so comparing them is cheap) and
// adds the newest round's at its end, or shifts them by one when a note
// message appears. A count is reused only for a message a provider would
// serialize alike (tokens.SameMessage: role, ids, every part and call), so
// it is exactly the count CountMessage would give. At most
// measureMemoConversations conversations are kept. Safe for concurrent use
// on different conversations.
type measureMemo struct {
	mu    sync.Mutex
	convs map[*harness.Conversation]*measured
}

// measureMemoConversations bounds the conversations a measureMemo keeps.
const measureMemoConversations = 256

// measured is one conversation's last measured view.
type measured struct {
	msgs []harness.Message
	raw  []int
}

// counts returns the token count of each of msgs, reusing the counts of
// the conversation's last measured view, and remembers msgs (a copy: the
// view's slice is edited afterwards) for the next.
func (mm *measureMemo) counts(conv *harness.Conversation, msgs []harness.Message, count func(*harness.Message) int) []int {
	mm.mu.Lock()
	prev := mm.convs[conv]
	mm.mu.Unlock()
	raw := make([]int, len(msgs))
	d := 0 // msgs[i] is expected at prev.msgs[i-d]
	for i := range msgs {
		if prev != nil {
			if j, ok := prev.find(&msgs[i], i, &d); ok {
				raw[i] = prev.raw[j]
				continue
			}
		}
		raw[i] = count(&msgs[i])
	}
	next := &measured{msgs: slices.Clone(msgs), raw: slices.Clone(raw)}
	mm.mu.Lock()
	if mm.convs == nil || (len(mm.convs) >= measureMemoConversations && mm.convs[conv] == nil) {
		mm.convs = map[*harness.Conversation]*measured{}
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
		if j := i - nd; j >= 0 && j < len(p.msgs) && tokens.SameMessage(m, &p.msgs[j]) {
			*d = nd
			return j, true
		}
	}
	return 0, false
}
