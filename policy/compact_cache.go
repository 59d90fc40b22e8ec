package policy

import (
	"bytes"
	"sync"

	"github.com/agentharness/harness"
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
