package benchcore

import (
	"slices"
	"sort"

	"github.com/agentharness/harness/internal/replayengine"
)

// Cut is one result a preset showed less of than keeping everything does,
// on one recording: how it was cut, what hiding it saved and what reading
// it back cost, under every price model of [Pricings]. Options.Cuts asks
// for them; each run's cell then lists its cuts.
type Cut struct {
	Call string `json:"call"`
	Tool string `json:"tool"`
	Args string `json:"args"`
	// Request is the first request that showed the result cut (the
	// recorded call's number, from 1).
	Request int `json:"request"`
	// Arrival is how the result was cut when it arrived (spilled, trimmed,
	// deduped; whole when only a later clear cut it), and Cleared the
	// first request that showed it cleared (0: none did).
	Arrival string `json:"arrival"`
	Cleared int    `json:"cleared,omitempty"`
	// FullChars and ShownChars are the characters of the result whole and
	// as shown when it arrived.
	FullChars  int `json:"full_chars"`
	ShownChars int `json:"shown_chars"`
	// Saved is, per price model, the result's share of what the preset's
	// requests cost less than keeping everything's: each request's
	// difference split over the results it shows cut by the characters
	// each hides (a clear's cache break is shared by the results cut in
	// that request, so a share can be negative).
	Saved map[string]float64 `json:"saved"`
	// Rereads counts the re-read rounds that brought back one of the
	// result's needles, and RereadCost, per price model, their cost: what
	// each round adds to the requests with the rounds before it priced in
	// (as the bench prices them), split evenly among the results it reads
	// back.
	Rereads    int                `json:"rereads"`
	RereadCost map[string]float64 `json:"reread_cost"`
}

// cutsOf lists what preset's replay cut of one recording against none's
// (keeping everything), in the order the cuts first showed, with rounds
// the re-read rounds preset is charged for (chargedRounds) and hidden the
// needles none hides too (hiddenUnderNone), which no round is charged
// for. Both reports need their requests' Shown lists.
func cutsOf(preset, none *replayengine.Report, rounds []replayengine.Recovery, hidden map[string]bool) []Cut {
	cs := &cutSet{at: map[string]int{}, stats: map[string]replayengine.ResultStat{}}
	for _, r := range preset.Results {
		cs.stats[r.CallID] = r
	}
	cs.savings(preset, none)
	cs.rereads(preset, rounds, hidden)
	sort.SliceStable(cs.cuts, func(i, j int) bool { return cs.cuts[i].Request < cs.cuts[j].Request })
	return cs.cuts
}

// cutSet gathers the cuts of one preset on one recording.
type cutSet struct {
	cuts  []Cut
	at    map[string]int // call id → index in cuts
	stats map[string]replayengine.ResultStat
}

// get is the cut of result id, made at request (added when new).
func (cs *cutSet) get(id string, request int) *Cut {
	if i, ok := cs.at[id]; ok {
		return &cs.cuts[i]
	}
	r := cs.stats[id]
	cs.at[id] = len(cs.cuts)
	cut := Cut{Call: id, Tool: r.Tool, Args: r.Args, Request: request, Arrival: r.State,
		FullChars: r.FullChars, ShownChars: r.ShownChars, Saved: map[string]float64{}, RereadCost: map[string]float64{}}
	for _, p := range Pricings() {
		cut.Saved[p.Name], cut.RereadCost[p.Name] = 0, 0
	}
	cs.cuts = append(cs.cuts, cut)
	return &cs.cuts[len(cs.cuts)-1]
}

// savings splits, request by request, what preset's request cost less
// than none's over the results it shows cut, by the characters each
// hides. Requests the replay added (Index 0) have no counterpart in none.
func (cs *cutSet) savings(preset, none *replayengine.Report) {
	kept := map[int]*replayengine.CallStat{}
	for i := range none.Calls {
		if c := &none.Calls[i]; c.Index > 0 {
			kept[c.Index] = c
		}
	}
	for i := range preset.Calls {
		c := &preset.Calls[i]
		n := kept[c.Index]
		if c.Index == 0 || n == nil {
			continue
		}
		shown := make(map[string]replayengine.Shown, len(c.Shown))
		for _, s := range c.Shown {
			shown[s.CallID] = s
		}
		type hid struct {
			id    string
			chars int
		}
		var hids []hid
		total := 0
		for _, s := range n.Shown {
			p := shown[s.CallID]
			if h := s.Chars - p.Chars; h > 0 {
				hids = append(hids, hid{s.CallID, h})
				total += h
				if cut := cs.get(s.CallID, c.Index); cut.Cleared == 0 && p.State == "cleared" {
					cut.Cleared = c.Index
				}
			}
		}
		for _, h := range hids {
			cut := &cs.cuts[cs.at[h.id]]
			for _, pr := range Pricings() {
				cut.Saved[pr.Name] += (pr.Cost(*n) - pr.Cost(*c)) * float64(h.chars) / float64(total)
			}
		}
	}
}

// rereads charges each round's cost to the results whose needles it
// brings back: the cost of the requests with rounds[:i+1] priced in less
// the cost with rounds[:i], so the rounds' shares sum to what the bench
// adds for them all.
func (cs *cutSet) rereads(preset *replayengine.Report, rounds []replayengine.Recovery, hidden map[string]bool) {
	ps := Pricings()
	before := make([]float64, len(ps))
	for j, p := range ps {
		for _, c := range preset.Calls {
			before[j] += p.Cost(c)
		}
	}
	for i, rc := range rounds {
		with := withRecovery(preset.Calls, rounds[:i+1])
		var srcs []string
		for k, n := range rc.Needles {
			if k < len(rc.Sources) && !hidden[n] && !slices.Contains(srcs, rc.Sources[k]) {
				srcs = append(srcs, rc.Sources[k])
			}
		}
		request := 0
		if rc.At < len(preset.Calls) {
			request = preset.Calls[rc.At].Index
		}
		for j, p := range ps {
			after := 0.0
			for _, c := range with {
				after += p.Cost(c)
			}
			for _, id := range srcs {
				cut := cs.get(id, request)
				cut.RereadCost[p.Name] += (after - before[j]) / float64(len(srcs))
			}
			before[j] = after
		}
		for _, id := range srcs {
			cs.get(id, request).Rereads++
		}
	}
}
