package rows

import (
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/codec"
)

// Loader assembles a conversation from the rows a store reads, table by
// table, each in its stored order (turns by index; rounds, calls, results
// and cuts by turn, round and position), and refuses a row whose parent
// is missing.
type Loader struct {
	Conv    *harness.Conversation
	turns   map[int]*harness.Turn
	rounds  map[[2]int]*harness.Round
	results map[[3]int]*harness.ToolResult
}

// NewLoader starts the conversation id.
func NewLoader(id string) *Loader {
	return &Loader{Conv: &harness.Conversation{ID: id}, turns: map[int]*harness.Turn{},
		rounds: map[[2]int]*harness.Round{}, results: map[[3]int]*harness.ToolResult{}}
}

// Turn adds a turn.
func (l *Loader) Turn(t *harness.Turn) {
	l.Conv.Turns = append(l.Conv.Turns, t)
	l.turns[t.Index] = t
}

// Context adds a context message to turn turn.
func (l *Loader) Context(turn int, cm harness.ContextMessage) error {
	t := l.turns[turn]
	if t == nil {
		return fmt.Errorf("a context message belongs to a missing turn %d", turn)
	}
	t.Context = append(t.Context, cm)
	return nil
}

// Round adds round r to turn turn.
func (l *Loader) Round(turn int, r *harness.Round) error {
	t := l.turns[turn]
	if t == nil {
		return fmt.Errorf("round %d belongs to a missing turn %d", r.Index, turn)
	}
	t.Rounds = append(t.Rounds, r)
	l.rounds[[2]int{turn, r.Index}] = r
	return nil
}

// Call adds a call to the assistant message of a round, or to its Dropped
// calls (made while tools were withheld).
func (l *Loader) Call(turn, round int, dropped bool, c harness.ToolCall) error {
	r := l.rounds[[2]int{turn, round}]
	if r == nil {
		return fmt.Errorf("call %s belongs to a missing round %d.%d", c.ID, turn, round)
	}
	if dropped {
		r.Dropped = append(r.Dropped, c)
	} else {
		r.Assistant.ToolCalls = append(r.Assistant.ToolCalls, c)
	}
	return nil
}

// Result adds the result at position seq of a round.
func (l *Loader) Result(turn, round, seq int, res *harness.ToolResult) error {
	r := l.rounds[[2]int{turn, round}]
	if r == nil {
		return fmt.Errorf("result %s belongs to a missing round %d.%d", res.CallID, turn, round)
	}
	r.Results = append(r.Results, res)
	l.results[[3]int{turn, round, seq}] = res
	return nil
}

// Cut adds a guard's cut to the result at position seq of a round.
func (l *Loader) Cut(turn, round, seq int, c harness.Cut) error {
	res := l.results[[3]int{turn, round, seq}]
	if res == nil {
		return fmt.Errorf("a cut belongs to a missing result %d.%d.%d", turn, round, seq)
	}
	res.Cuts = append(res.Cuts, c)
	return nil
}

// Calls assembles the call records of a conversation: one per stored
// result, then the guards' cuts and the per-request view cuts of each.
type Calls struct {
	Out    []store.CallRecord
	index  map[[3]int]int
	byCall map[callKey][]int
}

type callKey struct {
	turn int
	id   string
}

// Add adds a call record (results in stored order).
func (c *Calls) Add(rec store.CallRecord) {
	if c.index == nil {
		c.index, c.byCall = map[[3]int]int{}, map[callKey][]int{}
	}
	c.index[[3]int{rec.Turn, rec.Round, rec.Seq}] = len(c.Out)
	k := callKey{rec.Turn, rec.CallID}
	c.byCall[k] = append(c.byCall[k], len(c.Out))
	c.Out = append(c.Out, rec)
}

// Cut adds a guard's cut to the record of the result at seq of a round;
// a cut of no listed record (another turn's) is ignored.
func (c *Calls) Cut(turn, round, seq int, cut harness.Cut) {
	if i, ok := c.index[[3]int{turn, round, seq}]; ok {
		c.Out[i].Cuts = append(c.Out[i].Cuts, cut)
	}
}

// View adds what a per-turn policy did to callID in one request (views in
// stored order).
func (c *Calls) View(callID string, v store.ViewCut) {
	// A request sees the results of earlier rounds of its turn; with a
	// reused call id, the newest earlier one is the one it trimmed.
	best := -1
	for _, i := range c.byCall[callKey{v.Turn, callID}] {
		if c.Out[i].Round < v.Request || v.Request == 0 {
			best = i
		}
	}
	if best < 0 {
		return
	}
	vs := c.Out[best].Views
	// A request retried (rejected as too large, rebuilt) reports its cuts
	// again; the newest attempt is what was sent.
	if n := len(vs); n > 0 && vs[n-1].Request == v.Request && vs[n-1].Kind == v.Kind && vs[n-1].By == v.By {
		vs[n-1] = v
	} else {
		vs = append(vs, v)
	}
	c.Out[best].Views = vs
}

// Requests assembles what each stored round's request offered: first the
// rounds (Round), then the members of the tool lists they refer to
// (Member, by list and position), then Done.
type Requests struct {
	Out   []store.Request
	sets  map[string][]int // tool list hash → indexes in Out
	lists map[string]*toolList
}

type toolList struct {
	tools []harness.ToolSpec
	n     int // members the list was stored with
	bytes int
}

// Round adds the request of a round; systemHash is the hash it refers to
// ("" for none) and q.System its text, systemFound false when the store
// does not hold the prompt.
func (r *Requests) Round(q store.Request, systemHash string, systemFound bool) error {
	if systemHash != "" && !systemFound {
		return fmt.Errorf("turn %d round %d refers to system prompt %s, which the store does not hold", q.Turn, q.Round, codec.Short(systemHash))
	}
	if q.ToolSet != "" {
		if r.sets == nil {
			r.sets = map[string][]int{}
		}
		r.sets[q.ToolSet] = append(r.sets[q.ToolSet], len(r.Out))
	}
	r.Out = append(r.Out, q)
	return nil
}

// Lists reports whether any round refers to a tool list.
func (r *Requests) Lists() bool { return len(r.sets) > 0 }

// Member adds member pos (from 1) of the list hash, stored with tools
// members of bytes in all.
func (r *Requests) Member(hash string, tools, bytes, pos int, spec harness.ToolSpec, risk int64) error {
	if risk < 0 || risk > 0xff {
		return fmt.Errorf("tool schema %q has risk %d, not a set of risk flags", spec.Name, risk)
	}
	spec.Risk = harness.Risk(risk)
	if r.lists == nil {
		r.lists = map[string]*toolList{}
	}
	l := r.lists[hash]
	if l == nil {
		l = &toolList{tools: make([]harness.ToolSpec, 0, tools), n: tools, bytes: bytes}
		r.lists[hash] = l
	}
	if pos != len(l.tools)+1 {
		return fmt.Errorf("tool list %s lacks member %d", codec.Short(hash), len(l.tools)+1)
	}
	l.tools = append(l.tools, spec)
	return nil
}

// Done gives each round its list (rounds that share a list share one
// slice) and refuses a round whose list the store does not hold whole.
func (r *Requests) Done() ([]store.Request, error) {
	for h, idx := range r.sets {
		l := r.lists[h]
		if l == nil || len(l.tools) != l.n {
			q := r.Out[idx[0]]
			return nil, fmt.Errorf("turn %d round %d refers to tool list %s, which the store does not hold whole", q.Turn, q.Round, codec.Short(h))
		}
		for _, i := range idx {
			r.Out[i].Tools, r.Out[i].ToolBytes = l.tools, l.bytes
		}
	}
	return r.Out, nil
}
