package policy

import (
	"bytes"
	"sync"

	"github.com/agentharness/harness"
)

// placeholderCache remembers the placeholder of each cleared result, so a
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

func (pc *placeholderCache) putLocked(res *harness.ToolResult, e placeholderEntry) {
	if pc.cur == nil || len(pc.cur) >= placeholderCacheSize {
		pc.old, pc.cur = pc.cur, make(map[*harness.ToolResult]placeholderEntry)
	}
	pc.cur[res] = e
}
