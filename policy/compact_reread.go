package policy

import (
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/spill"
	"github.com/agentharness/harness/tools/recall"
)

// The savings bank's re-reads (CompactPolicy.ChargeRereads). A cut bets
// that the agent will not need what it hid; when it does, the agent reads
// it back: a call of the recall tool, or a call whose arguments name a
// spill file. Keeping everything makes no such call, so the bank prices
// keeping everything without them: a request answered with nothing but
// re-reads is charged whole (keeping everything never sent it), and the
// re-reads' calls and results are left out of keeping everything's later
// requests, so every request that carries them is charged for them until
// a clear takes them. A clear for cost then waits until the cuts have
// saved what their re-reads cost.

// rereadCall reports whether call reads back what a cut moved out of
// view: the recall tool, or arguments naming a file of the spill folder
// (a relative locator or an absolute path, either separator).
func rereadCall(call *harness.ToolCall) bool {
	if call.Name == recall.Name {
		return true
	}
	args := string(call.Args)
	if !strings.Contains(args, "spill") {
		return false
	}
	return strings.Contains(strings.ReplaceAll(args, `\\`, "/"), spill.Folder+"/")
}

// answeredWithRereads reports whether the request before v's (the
// conversation's newest round) was answered with re-reads alone.
func answeredWithRereads(v *harness.View) bool {
	r := newestRound(v)
	if r == nil || len(r.Assistant.ToolCalls) == 0 {
		return false
	}
	for i := range r.Assistant.ToolCalls {
		if !rereadCall(&r.Assistant.ToolCalls[i]) {
			return false
		}
	}
	return true
}

// newestRound is the last round of v's conversation before v's request:
// the last of v's turn, else of the turn before it; nil when none.
func newestRound(v *harness.View) *harness.Round {
	var last *harness.Round
	for _, t := range v.Conversation.Turns {
		if t == nil {
			continue
		}
		if len(t.Rounds) > 0 {
			last = t.Rounds[len(t.Rounds)-1]
		}
		if t == v.Turn {
			break
		}
	}
	return last
}

// isReread reports whether call (by its id) is a re-read, remembered per
// call id since a conversation's calls never change.
func (k *bank) isReread(call *harness.ToolCall) bool {
	r, ok := k.rereads[call.ID]
	if !ok {
		r = rereadCall(call)
		k.rereads[call.ID] = r
	}
	return r
}

// withoutRereads is m (an assistant message) as keeping everything sends
// it: without its re-read calls; ok is false when nothing is left.
func (k *bank) withoutRereads(m *harness.Message) (out *harness.Message, ok bool) {
	n := 0
	for i := range m.ToolCalls {
		if k.isReread(&m.ToolCalls[i]) {
			n++
		}
	}
	if n == 0 {
		return m, true
	}
	if n == len(m.ToolCalls) && m.Text() == "" {
		return nil, false
	}
	c := *m
	c.ToolCalls = make([]harness.ToolCall, 0, len(m.ToolCalls)-n)
	for i := range m.ToolCalls {
		if !k.isReread(&m.ToolCalls[i]) {
			c.ToolCalls = append(c.ToolCalls, m.ToolCalls[i])
		}
	}
	return &c, true
}
