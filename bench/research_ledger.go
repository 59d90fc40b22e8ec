package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/replay"
	"github.com/agentharness/harness/tokens"
)

// ledger says where one replay's effective tokens went: per request, the
// uncached, cached and output terms of the cost and whether the prompt
// cache broke; per tool result, how many requests carried it and what
// that cost. It is how the research presets (research_*.go) were chosen:
// a result policy can only save what the ledger attributes to results.
//
// It is measured, not estimated: a probe view policy, run after the
// preset's own policies, keeps every request the replay sends, and the
// ledger counts each message with the replay's counter and takes the
// cached prefix by the replay's rule (the tool schemas, then messages
// identical to the previous request's, up to the first difference), so
// its sums equal the replay's figures (the tests check it).
type ledger struct {
	Calls   []ledgerCall
	Results []ledgerResult
	// Uncached, Cached and Output are the three terms of the effective
	// cost (uncached + 0.1 × cached + 4 × output), summed over calls.
	Uncached, Cached, Output float64
	// ResultCost is the part of Uncached + Cached spent on tool messages.
	ResultCost float64
	// Breaks counts requests whose cached prefix stops before the end of
	// the previous request (something already sent was changed), and
	// BreakTokens the tokens those requests sent again uncached.
	Breaks, BreakTokens int
	// Hidden lists the needles not visible in the request that first used
	// them (recoverable or not), as the replay judges visibility.
	Hidden []replay.Needle
}

// ledgerCall is one request's share of the cost.
type ledgerCall struct {
	Index                   int
	Final                   bool // tools withheld (the synthesis call)
	Input, Cached, Uncached int
	Output                  int
	Effective               float64
	// Resent is what the request sent uncached of messages the previous
	// request already had (non-zero only on a cache break).
	Resent int
	// Results is the tokens of tool messages in the request, ResultsCached
	// those in the cached prefix.
	Results, ResultsCached int
}

// ledgerResult is one tool result's residency and cost.
type ledgerResult struct {
	CallID, Tool, Args string
	// Arrive is the index of the first request that showed the result.
	Arrive int
	// Tokens is its tool message at arrival; Requests how many requests
	// showed it; Cost what it cost over them (uncached + 0.1 × cached).
	Tokens, Requests int
	Cost             float64
	// Needles counts the evidence the agent took from it; LastUse is the
	// distance, in requests, from arrival to the latest first use (-1
	// without needles).
	Needles, LastUse int
}

// probe is a view policy that keeps every request built.
type probe struct {
	mu    sync.Mutex
	views []probeView
}

type probeView struct {
	turn, round int
	msgs        []harness.Message
	tools       []harness.ToolSpec
}

func (p *probe) ApplyView(_ context.Context, v *harness.View) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	pv := probeView{round: v.Round, msgs: append([]harness.Message(nil), v.Messages...), tools: v.SentTools()}
	if v.Turn != nil {
		pv.turn = v.Turn.Index
	}
	// A stop rebuilds the same request as final: keep the one sent.
	if n := len(p.views); n > 0 && p.views[n-1].turn == pv.turn && p.views[n-1].round == pv.round {
		p.views[n-1] = pv
		return nil
	}
	p.views = append(p.views, pv)
	return nil
}

// ledgerReplay replays rec under preset with a probe and returns the
// report and its ledger.
func ledgerReplay(ctx context.Context, rec *replay.Recording, preset Preset, c tokens.Counter) (*replay.Report, *ledger, error) {
	pr := &probe{}
	pol := replay.Policy{Name: preset.Name, New: func(env replay.Env) (*replay.Config, error) {
		cfg, err := preset.build(env)
		if err != nil {
			return nil, err
		}
		cfg.Policies = append(cfg.Policies, pr)
		return cfg, nil
	}}
	needles := replay.Needles(rec)
	rep, err := replay.Replay(ctx, rec, pol, &replay.Options{Counter: c, Needles: needles})
	if err != nil {
		return nil, nil, err
	}
	l, err := buildLedger(rec, rep, pr.views, needles, c)
	return rep, l, err
}

// buildLedger attributes rep's cost using the requests the probe kept.
func buildLedger(rec *replay.Recording, rep *replay.Report, views []probeView, needles []replay.Needle, c tokens.Counter) (*ledger, error) {
	if len(views) != len(rep.Calls) {
		return nil, fmt.Errorf("ledger: %d requests probed, %d replayed", len(views), len(rep.Calls))
	}
	l := &ledger{}
	byID := map[string]int{}
	for _, r := range rep.Results {
		byID[r.CallID] = len(l.Results)
		l.Results = append(l.Results, ledgerResult{CallID: r.CallID, Tool: r.Tool, Args: r.Args, LastUse: -1})
	}
	var prevUnits []string
	prevTools, prevHad := "", false
	for k, v := range views {
		cs := rep.Calls[k]
		lc := ledgerCall{Index: cs.Index, Final: cs.Final, Output: cs.Output}
		input, cached := tokens.RequestOverhead, 0
		prefix := true
		if len(v.tools) > 0 {
			key, _ := json.Marshal(v.tools)
			n := 0
			for _, t := range v.tools {
				n += tokens.CountTool(c, t)
			}
			input += n
			if prevHad && prevTools == string(key) {
				cached += n
			} else {
				prefix = false
			}
			prevTools, prevHad = string(key), true
		} else {
			prefix = prefix && !prevHad
			prevHad = false
		}
		units := make([]string, len(v.msgs))
		for i := range v.msgs {
			m := &v.msgs[i]
			units[i] = string(replay.AppendUnit(nil, m))
			n := tokens.CountMessage(c, m)
			input += n
			inPrefix := prefix && i < len(prevUnits) && units[i] == prevUnits[i]
			if inPrefix {
				cached += n
			} else {
				prefix = false
				if i < len(prevUnits) {
					lc.Resent += n
				}
			}
			if m.Role != harness.RoleTool {
				continue
			}
			j, ok := byID[m.ToolCallID]
			if !ok {
				continue
			}
			r := &l.Results[j]
			if r.Requests == 0 {
				r.Arrive, r.Tokens = cs.Index, n
			}
			r.Requests++
			lc.Results += n
			if inPrefix {
				lc.ResultsCached += n
				r.Cost += 0.1 * float64(n)
			} else {
				r.Cost += float64(n)
			}
		}
		if input != cs.Input || cached != cs.Cached {
			return nil, fmt.Errorf("ledger: request %d counts %d/%d tokens (input/cached), the replay %d/%d", cs.Index, input, cached, cs.Input, cs.Cached)
		}
		lc.Input, lc.Cached, lc.Uncached = input, cached, input-cached
		lc.Effective = float64(lc.Uncached) + 0.1*float64(cached) + 4*float64(cs.Output)
		if lc.Resent > 0 {
			l.Breaks++
			l.BreakTokens += lc.Resent
		}
		l.Calls = append(l.Calls, lc)
		l.Uncached += float64(lc.Uncached)
		l.Cached += 0.1 * float64(cached)
		l.Output += 4 * float64(cs.Output)
		prevUnits = units
	}
	for _, r := range l.Results {
		l.ResultCost += r.Cost
	}
	// Needles: distance from the result's arrival to its first use.
	callIndex := map[[2]int]int{}
	n := 0
	for ti, t := range rec.Turns {
		for ci := range t.Calls {
			n++
			callIndex[[2]int{ti, ci}] = n
		}
	}
	for _, nd := range needles {
		if k := callIndex[[2]int{nd.Turn, nd.Call}] - 1; k >= 0 && k < len(views) && !viewShows(views[k].msgs, nd.Text) {
			l.Hidden = append(l.Hidden, nd)
		}
		j, ok := byID[nd.CallID]
		if !ok {
			continue
		}
		r := &l.Results[j]
		r.Needles++
		if d := callIndex[[2]int{nd.Turn, nd.Call}] - r.Arrive; d > r.LastUse {
			r.LastUse = d
		}
	}
	return l, nil
}

// viewShows reports whether a request's messages (text or call
// arguments) contain s, the replay's test of a visible needle.
func viewShows(msgs []harness.Message, s string) bool {
	for _, m := range msgs {
		if strings.Contains(m.Text(), s) {
			return true
		}
		for _, tc := range m.ToolCalls {
			if strings.Contains(string(tc.Args), s) {
				return true
			}
		}
	}
	return false
}

// costliest returns the results by cost, most expensive first.
func (l *ledger) costliest() []ledgerResult {
	out := append([]ledgerResult(nil), l.Results...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Cost > out[j].Cost })
	return out
}
