package benchlab

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentharness/harness/internal/benchcore"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/internal/replayengine"
	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/replay"
	"github.com/agentharness/harness/tokens"
)

// TestResearchAttribution says, for each set of recorded runs named by
// HARNESS_ATTRIBUTE_SETS (comma-separated folders), where a preset
// (HARNESS_ATTRIBUTE_PRESET, default harness) leaves removable cost and
// where it loses the needles it loses. Cost is char-weighted under
// openai-like prices, cache breaks apart: a result costs its shown
// characters at 1 in the request where it arrives and 0.1 in every later
// one, so keeping everything costs F × (1 + 0.1 × later requests) and
// showing nothing costs 0; "removable" is the sum over results of keeping
// them whole. The removable cost is split by whether the agent used the
// result (a needle comes from it) and, for used ones, before or after its
// last use; by size band and by kind of call. A lost needle is attributed
// to what hid it in the request that used it: the ceiling's preview, a
// collapse marker, a clear for cost or the window's clear, the turn
// budget. Clears for cost are split by whether the cleared result was
// used before the clear, after it, and whether a later identical call had
// superseded it. docs/design.md reports the tables.
func TestResearchAttribution(t *testing.T) {
	dirs := os.Getenv("HARNESS_ATTRIBUTE_SETS")
	if dirs == "" {
		t.Skip("HARNESS_ATTRIBUTE_SETS is not set")
	}
	name := os.Getenv("HARNESS_ATTRIBUTE_PRESET")
	if name == "" {
		name = "harness"
	}
	base, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	bpe, err := tokens.O200k()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range strings.Split(dirs, ",") {
		recs, _, err := replay.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		var a attribution
		for _, rec := range recs {
			counter := tokens.NewCache(bpe, &tokens.CacheOptions{MaxEntries: 1 << 16})
			needles := replayengine.Needles(rec)
			pr := &attrProbe{byUse: map[[2]int][]replayengine.Needle{}}
			for _, n := range needles {
				pr.byUse[[2]int{n.Turn, n.Call}] = append(pr.byUse[[2]int{n.Turn, n.Call}], n)
			}
			pol := replayengine.Policy{Name: name, New: func(env replayengine.Env) (*replayengine.Config, error) {
				cfg, err := base.Build(env)
				if err != nil {
					return nil, err
				}
				for i, p := range cfg.Policies {
					if _, ok := p.(*policy.CompactPolicy); ok {
						cfg.Policies[i] = observedPolicy{p, pr}
					}
				}
				cfg.Policies = append(cfg.Policies, pr)
				return cfg, nil
			}}
			rep, err := replayengine.Replay(context.Background(), rec, pol, &replayengine.Options{Counter: counter, Needles: needles})
			if err != nil {
				t.Fatal(err)
			}
			a.add(rec, needles, rep, pr)
		}
		t.Logf("\n== %s (%d recordings, preset %s)\n%s", filepath.Base(dir), len(recs), name, a.String())
		if path := os.Getenv("HARNESS_ATTRIBUTE_OUT"); path != "" {
			b, _ := json.Marshal(map[string]any{"set": filepath.Base(dir), "preset": name, "attribution": a})
			f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(f, "%s\n", b)
			f.Close()
		}
	}
}

// attrProbe is the last view policy of an attributed replay: it checks
// the needles each request must show and says what hid the lost ones.
type attrProbe struct {
	byUse map[[2]int][]replayengine.Needle
	// marks are compaction's clears, in order, with the stage that made
	// them (clear-old: for cost; clear: the window's).
	marks []attrMark
	lost  []attrLost
}

type attrMark struct {
	turn, round int
	stage       string
}

type attrLost struct {
	needle replayengine.Needle
	cause  string
}

// observedPolicy runs a policy with an observer that books compaction's
// clears on the probe.
type observedPolicy struct {
	inner harness.ViewPolicy
	p     *attrProbe
}

func (o observedPolicy) ApplyView(ctx context.Context, v *harness.View) error {
	ctx = harness.WithObserver(ctx, func(e harness.Event) {
		stage, _ := e.Data["stage"].(string)
		if stage != "clear" && stage != "clear-old" {
			return
		}
		tu, _ := e.Data["clear_turn"].(int)
		ro, _ := e.Data["clear_round"].(int)
		o.p.marks = append(o.p.marks, attrMark{tu, ro, stage})
	})
	return o.inner.ApplyView(ctx, v)
}

// stageOf names the clear that first covered a result of (turn, round).
func (p *attrProbe) stageOf(turn, round int) string {
	for _, m := range p.marks {
		if turn < m.turn || (turn == m.turn && round <= m.round) {
			return m.stage
		}
	}
	return "clear-?"
}

func (p *attrProbe) ApplyView(_ context.Context, v *harness.View) error {
	needles := p.byUse[[2]int{v.Turn.Index - 1, v.Round - 1}]
	if len(needles) == 0 {
		return nil
	}
	texts := make([]string, len(v.Messages))
	for i, m := range v.Messages {
		var b strings.Builder
		b.WriteString(m.Text())
		for _, tc := range m.ToolCalls {
			b.WriteString("\n")
			b.Write(tc.Args)
		}
		texts[i] = b.String()
	}
	for _, n := range needles {
		if slices.ContainsFunc(texts, func(s string) bool { return strings.Contains(s, n.Text) }) {
			continue
		}
		p.lost = append(p.lost, attrLost{n, p.cause(v, n)})
	}
	return nil
}

// cause says what hid needle n from v: the newest cut on its result.
func (p *attrProbe) cause(v *harness.View, n replayengine.Needle) string {
	for i, m := range v.Messages {
		if m.Role != harness.RoleTool || m.ToolCallID != n.CallID {
			continue
		}
		o := v.Origins[i]
		for j := len(o.Cuts) - 1; j >= 0; j-- {
			c := o.Cuts[j]
			if c.Kind == harness.CutCleared && c.By == "compact" {
				return p.stageOf(o.Turn, o.Round)
			}
			return c.By + "/" + string(c.Kind)
		}
		if o.Result != nil {
			for j := len(o.Result.Cuts) - 1; j >= 0; j-- {
				switch c := o.Result.Cuts[j]; c.By {
				case guard.ResultPolicyName:
					return "ceiling preview"
				default:
					return c.By + "/" + string(c.Kind)
				}
			}
		}
		return "not visible even whole"
	}
	return "not in view"
}

// attribution sums the figures of one set.
type attribution struct {
	Removable float64 `json:"removable"`
	// Buckets of the removable cost: what keeping everything spends and
	// what the preset spends on them.
	Use   map[string]*attrCost `json:"use"`
	Band  map[string]*attrCost `json:"band"`
	Kind  map[string]*attrCost `json:"kind"`
	Lost  map[string]int       `json:"lost"` // by cause
	LostB map[string]int       `json:"lost_band"`
	LostK map[string]int       `json:"lost_kind"`
	// LostPos is where in the full text the needles the ceiling's preview
	// hid came from.
	LostPos map[string]int `json:"lost_pos"`
	Needles int            `json:"needles"`
	// Clears of results for cost, by what the result was at the clear.
	Clears map[string]*attrCost `json:"clears"`
	// Needles each kind and band holds.
	NeedB map[string]int `json:"needles_band"`
	NeedK map[string]int `json:"needles_kind"`
	// Age: needles by how many requests after their result's arrival they
	// were first used (1: the request after the one that showed it first),
	// by kind; Beyond: the removable cost of results of at least 1k chars
	// shown at age A or later, by kind and A.
	Age    map[string]int       `json:"age"`
	Beyond map[string]*attrCost `json:"beyond"`
	// Quoted: for results cleared for cost after the agent quoted them,
	// the characters of the lines within 3 of a line holding a quoted
	// needle (Kept) against the result's (None); QuotedLost counts the
	// needles a clear hid from such results, QuotedNear those of them
	// on such a line.
	Quoted                 attrCost `json:"quoted"`
	QuotedLost, QuotedNear int
	// ClearBand: of the results cleared for cost, by the characters shown
	// in the request before the clear (what a size threshold on the
	// stored result would see), the char-weighted removal the clear made
	// (None) and the results; ClearLost the needles clears for cost hid,
	// by the same band.
	ClearBand map[string]*attrCost `json:"clear_band"`
	ClearLost map[string]int       `json:"clear_lost"`
	// Recency: results cleared for cost by the rounds between their last
	// use before the clear and the clear (None, Kept: their cost as in
	// Clears); Again: the same for those of them used again after it;
	// RecencyLost: the needles clears hid from them. Horizon and
	// HorizonAgain/HorizonLost bucket the same results by the rounds
	// between their last use up to the third round after the clear's mark
	// and that round: what a rule that must decide from the transcript
	// up to the rounds every clear keeps can see.
	Recency, Again, Horizon, HorizonAgain map[string]*attrCost
	RecencyLost, HorizonLost              map[string]int
	// Never splits the results the agent never used (see neverKeys).
	Never map[string]*attrCost `json:"never"`
	// Cmd is every result's removable cost by shellCommand and size band
	// (results over 1k characters), NeedC the needles each holds.
	Cmd   map[string]*attrCost `json:"cmd"`
	NeedC map[string]int       `json:"needles_cmd"`
	// Unquoted is the removable cost a result still has A requests after
	// its arrival (0.1 × its characters × the requests left), by whether
	// the agent had used it by then and, if not, whether it does later.
	Unquoted map[string]*attrCost `json:"unquoted"`
}

type attrCost struct {
	None, Kept float64
	N          int
}

func bump(m *map[string]*attrCost, k string, none, kept float64) {
	if *m == nil {
		*m = map[string]*attrCost{}
	}
	c := (*m)[k]
	if c == nil {
		c = &attrCost{}
		(*m)[k] = c
	}
	c.None += none
	c.Kept += kept
	c.N++
}

func count(m *map[string]int, k string) {
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[k]++
}

// attrResult is one result of a replay, as the attribution follows it.
type attrResult struct {
	tool, args, full string
	turn, round      int
	arrival          int       // request index where it is first shown
	shown            []float64 // chars shown per request from arrival
	cleared          int       // first request showing it cleared, -1
	uses             []int     // requests where its needles were first used
	superseded       int       // request where an identical call's result arrived, -1
	// recency and horizon are the buckets of a result cleared for cost
	// (see attribution.Recency).
	recency, horizon string
	// state is how the request of its arrival showed it.
	state string
}

func (a *attribution) add(rec *replay.Recording, needles []replayengine.Needle, rep *replayengine.Report, pr *attrProbe) {
	full := map[string]string{}
	for _, t := range rec.Turns {
		for _, c := range t.Calls {
			for _, r := range c.Results {
				full[r.CallID] = r.FullText()
			}
		}
	}
	reqOf := map[[2]int]int{}
	for k, c := range rep.Calls {
		reqOf[[2]int{c.Turn - 1, c.Round - 1}] = k
	}
	results := map[string]*attrResult{}
	var order []string
	for _, r := range rep.Results {
		results[r.CallID] = &attrResult{tool: r.Tool, args: r.Args, full: full[r.CallID], turn: r.Turn, round: r.Round, arrival: -1, cleared: -1, superseded: -1}
		order = append(order, r.CallID)
	}
	for k, c := range rep.Calls {
		for _, s := range c.Shown {
			r := results[s.CallID]
			if r == nil {
				continue
			}
			if r.arrival < 0 {
				r.arrival, r.state = k, s.State
			}
			r.shown = append(r.shown, float64(s.Chars))
			if s.State == string(harness.CutCleared) && r.cleared < 0 {
				r.cleared = k
			}
		}
	}
	for _, n := range needles {
		if r := results[n.CallID]; r != nil {
			if k, ok := reqOf[[2]int{n.Turn, n.Call}]; ok {
				r.uses = append(r.uses, k)
			}
		}
	}
	last := map[string]string{} // tool+args → call id of the latest
	for _, id := range order {
		r := results[id]
		key := r.tool + "\x00" + r.args
		if prev, ok := last[key]; ok && results[prev].superseded < 0 {
			results[prev].superseded = r.arrival
		}
		last[key] = id
	}
	total := len(rep.Calls)
	for _, id := range order {
		r := results[id]
		if r.arrival < 0 {
			continue
		}
		f := float64(utf8.RuneCountInString(r.full))
		none := f * (1 + 0.1*float64(total-1-r.arrival))
		kept := 0.0
		for i, s := range r.shown {
			if i == 0 {
				kept += s
			} else {
				kept += 0.1 * s
			}
		}
		a.Removable += none
		band, kind := sizeBand(int(f)), callKind(r.tool, r.args)
		bump(&a.Band, band, none, kept)
		bump(&a.Kind, kind, none, kept)
		bump(&a.Cmd, cmdBand(r.tool, r.args, int(f)), none, kept)
		for _, k := range unquotedKeys(r, total) {
			bump(&a.Unquoted, k.key, k.cost, 0)
		}
		if len(r.uses) == 0 {
			bump(&a.Use, "never used", none, kept)
			for _, k := range neverKeys(r, rep.Calls, pr) {
				bump(&a.Never, k, none, kept)
			}
		} else {
			lu := slices.Max(r.uses)
			before := f * (1 + 0.1*float64(lu-r.arrival))
			keptBefore := 0.0
			for i, s := range r.shown {
				if r.arrival+i > lu {
					break
				}
				if i == 0 {
					keptBefore += s
				} else {
					keptBefore += 0.1 * s
				}
			}
			bump(&a.Use, "used: to its last use", before, keptBefore)
			bump(&a.Use, "used: after its last use", none-before, kept-keptBefore)
		}
		for _, age := range []int{1, 2, 4, 8} {
			if f >= 1_000 {
				later := max(0, total-r.arrival-age)
				bump(&a.Beyond, fmt.Sprintf("age %d+ %s", age, kind), 0.1*f*float64(later), 0)
				bump(&a.Beyond, fmt.Sprintf("age %d+ all", age), 0.1*f*float64(later), 0)
			}
		}
		if r.cleared >= 0 && pr.stageOf(r.turn, r.round) == "clear-old" {
			usedBefore, usedAfter := false, false
			for _, u := range r.uses {
				usedBefore = usedBefore || u < r.cleared
				usedAfter = usedAfter || u >= r.cleared
			}
			key := fmt.Sprintf("used before %v, after %v", usedBefore, usedAfter)
			if usedBefore {
				var quoted []string
				for _, n := range needles {
					if k, ok := reqOf[[2]int{n.Turn, n.Call}]; ok && n.CallID == id && k < r.cleared {
						quoted = append(quoted, n.Text)
					}
				}
				_, keptChars := nearQuoted(r.full, quoted, "", 3)
				a.Quoted.None += f
				a.Quoted.Kept += float64(keptChars)
				a.Quoted.N++
			}
			if r.superseded >= 0 && r.superseded < r.cleared {
				key += ", superseded"
			}
			bump(&a.Clears, key, none, kept)
			if pre := r.shownBefore(r.cleared); pre > 0 {
				removal := 0.0
				for k := r.cleared; k-r.arrival < len(r.shown); k++ {
					removal += 0.1 * max(0, pre-r.shown[k-r.arrival])
				}
				bump(&a.ClearBand, clearBand(int(pre)), removal, 0)
				bump(&a.ClearBand, clearBand(int(pre))+arrivalCut(r, pre), removal, 0)
			}
			r.recency = recencyBand(r.uses, r.cleared-1)
			bump(&a.Recency, r.recency, none, kept)
			if h, ok := pr.horizonReq(r.turn, r.round, reqOf, 3); ok {
				r.horizon = recencyBand(r.uses, h)
				bump(&a.Horizon, r.horizon, none, kept)
			}
			if usedAfter {
				bump(&a.Again, r.recency, none, kept)
				if r.horizon != "" {
					bump(&a.HorizonAgain, r.horizon, none, kept)
				}
			}
		}
	}
	a.Needles += len(needles)
	for _, n := range needles {
		if r := results[n.CallID]; r != nil {
			count(&a.NeedB, sizeBand(utf8.RuneCountInString(r.full)))
			count(&a.NeedK, callKind(r.tool, r.args))
			count(&a.NeedC, cmdBand(r.tool, r.args, utf8.RuneCountInString(r.full)))
			if k, ok := reqOf[[2]int{n.Turn, n.Call}]; ok && utf8.RuneCountInString(r.full) >= 1_000 {
				count(&a.Age, fmt.Sprintf("%s %s", ageBand(k-r.arrival), callKind(r.tool, r.args)))
				count(&a.Age, fmt.Sprintf("%s all", ageBand(k-r.arrival)))
			}
		}
	}
	for _, l := range pr.lost {
		count(&a.Lost, l.cause)
		r := results[l.needle.CallID]
		if r == nil {
			continue
		}
		count(&a.LostB, sizeBand(utf8.RuneCountInString(r.full)))
		count(&a.LostK, callKind(r.tool, r.args))
		if l.cause == "clear-old" && r.cleared >= 0 {
			var quoted []string
			for _, n := range needles {
				if k, ok := reqOf[[2]int{n.Turn, n.Call}]; ok && n.CallID == l.needle.CallID && k < r.cleared {
					quoted = append(quoted, n.Text)
				}
			}
			if len(quoted) > 0 {
				a.QuotedLost++
				if near, _ := nearQuoted(r.full, quoted, l.needle.Text, 3); near {
					a.QuotedNear++
				}
			}
		}
		if l.cause == "clear-old" && r.cleared >= 0 {
			pre := r.shownBefore(r.cleared)
			count(&a.ClearLost, clearBand(int(pre)))
			count(&a.ClearLost, clearBand(int(pre))+arrivalCut(r, pre))
		}
		if l.cause == "clear-old" && r.recency != "" {
			count(&a.RecencyLost, r.recency)
			if r.horizon != "" {
				count(&a.HorizonLost, r.horizon)
			}
		}
		if l.cause == "clear-old" {
			used := false
			for _, u := range r.uses {
				used = used || (r.cleared >= 0 && u < r.cleared)
			}
			count(&a.LostPos, fmt.Sprintf("clear-old, result used before the clear %v", used))
		}
		if l.cause == "ceiling preview" {
			count(&a.LostPos, needlePos(r.full, l.needle.Text, r.args))
		}
	}
}

// shownBefore is the characters of r shown in the request before
// request k (0 when it was not shown then).
func (r *attrResult) shownBefore(k int) float64 {
	if i := k - 1 - r.arrival; i >= 0 && i < len(r.shown) {
		return r.shown[i]
	}
	return 0
}

// arrivalCut says whether r was shown cut (a ceiling's preview, a
// collapse) before it was cleared: its full text is longer than the pre
// characters shown.
func arrivalCut(r *attrResult, pre float64) string {
	if float64(utf8.RuneCountInString(r.full)) > pre+16 {
		return " / cut at arrival"
	}
	return " / whole"
}

// clearBand names the band of a cleared result of n characters: <1k,
// 1-4k, 4-12k and 12k+, the last two split in two.
func clearBand(n int) string {
	switch {
	case n < 1_000:
		return "a <1k"
	case n < 4_000:
		return "b 1-4k"
	case n < 8_000:
		return "c 4-12k: 4-8k"
	case n < 12_000:
		return "c 4-12k: 8-12k"
	case n < 24_000:
		return "d 12k+: 12-24k"
	}
	return "d 12k+: 24k+"
}

// recencyBand names the band of the rounds between the last of uses at
// or before request end and end: "never" when none is, else 0-2, 3-5, 6-11
// or 12+.
func recencyBand(uses []int, end int) string {
	last := -1
	for _, u := range uses {
		if u <= end {
			last = max(last, u)
		}
	}
	switch d := end - last; {
	case last < 0:
		return "a never"
	case d <= 2:
		return "b 0-2"
	case d <= 5:
		return "c 3-5"
	case d <= 11:
		return "d 6-11"
	}
	return "e 12+"
}

// horizonReq is the request whose response is the after-th round after
// the mark of the clear that first covered a result of (turn, round):
// the last round a rule deciding at that clear may read.
func (p *attrProbe) horizonReq(turn, round int, reqOf map[[2]int]int, after int) (int, bool) {
	for _, m := range p.marks {
		if turn < m.turn || (turn == m.turn && round <= m.round) {
			k, ok := reqOf[[2]int{m.turn - 1, m.round - 1}]
			return k + after, ok
		}
	}
	return 0, false
}

// nearQuoted reports whether needle's first line lies within ctx lines
// of a line holding one of quoted, and how many characters those
// windows hold.
func nearQuoted(full string, quoted []string, needle string, ctx int) (bool, int) {
	lines := strings.SplitAfter(full, "\n")
	keep := make([]bool, len(lines))
	for i, l := range lines {
		if slices.ContainsFunc(quoted, func(q string) bool { return strings.Contains(l, q) }) {
			for j := max(0, i-ctx); j <= min(len(lines)-1, i+ctx); j++ {
				keep[j] = true
			}
		}
	}
	near, chars := false, 0
	for i, l := range lines {
		if keep[i] {
			chars += utf8.RuneCountInString(l)
			near = near || (needle != "" && strings.Contains(l, needle))
		}
	}
	return near, chars
}

// ageBand names the band of a needle's age in requests.
func ageBand(n int) string {
	switch {
	case n <= 1:
		return "1"
	case n == 2:
		return "2"
	case n <= 4:
		return "3-4"
	case n <= 8:
		return "5-8"
	}
	return "9+"
}

// sizeBand names the band of a result of n characters.
func sizeBand(n int) string {
	switch {
	case n < 1_000:
		return "a <1k"
	case n < 4_000:
		return "b 1-4k"
	case n < 10_000:
		return "c 4-10k"
	case n < 24_000:
		return "d 10-24k"
	case n < 100_000:
		return "e 24-100k"
	}
	return "f 100k+"
}

// needlePos says where in full the needle first occurs: in the first or
// last 1.5 KiB (what the preview's head and tail show), elsewhere on a
// line holding a word of the call's arguments, or elsewhere.
func needlePos(full, needle, args string) string {
	i := strings.Index(full, needle)
	switch {
	case i < 0:
		return "?"
	case i < 1536:
		return "head 1.5k"
	case i >= len(full)-1024:
		return "tail 1k"
	case i < 8192:
		return "head 1.5-8k"
	case i >= len(full)-8192:
		return "tail 1-8k"
	}
	s := strings.LastIndexByte(full[:i], '\n') + 1
	e := strings.IndexByte(full[i:], '\n')
	line := full[s:]
	if e >= 0 {
		line = full[s : i+e]
	}
	for _, w := range strings.FieldsFunc(args, func(r rune) bool {
		return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		if len(w) >= 4 && strings.Contains(line, w) {
			return "middle, line matches the call"
		}
	}
	return "middle"
}

// callKind classifies a call by its tool and, for a shell, the first
// program of its command.
func callKind(tool, args string) string {
	t := strings.ToLower(tool)
	switch {
	case benchcore.IsRead(t) || t == "notebookread":
		return "read"
	case strings.Contains(t, "edit") || strings.Contains(t, "write") || t == "apply_patch" || t == "str_replace_based_edit_tool":
		return "edit"
	case t == "grep" || t == "glob" || t == "ls" || t == "search" || strings.Contains(t, "search"):
		return "search"
	case t == "task" || t == "agent":
		return "subagent"
	case strings.Contains(t, "todo"):
		return "todo"
	case !benchcore.IsShell(t) && t != "str_replace_editor":
		return "other tool"
	}
	var a struct {
		Command any    `json:"command"`
		Cmd     any    `json:"cmd"`
		Path    string `json:"path"`
	}
	_ = json.Unmarshal([]byte(args), &a)
	cmd := fmt.Sprint(a.Command)
	if a.Command == nil {
		cmd = fmt.Sprint(a.Cmd)
	}
	if t == "str_replace_editor" {
		if cmd == "view" {
			return "read"
		}
		return "edit"
	}
	if a.Command == nil && a.Cmd == nil {
		cmd = args
	}
	cmd = strings.Trim(cmd, "[]")
	for _, seg := range strings.FieldsFunc(cmd, func(r rune) bool { return r == '|' || r == ';' || r == '&' || r == '\n' }) {
		f := strings.Fields(seg)
		for len(f) > 0 && (f[0] == "cd" || strings.Contains(f[0], "=") || f[0] == "bash" || f[0] == "-lc" || f[0] == "timeout") {
			if f[0] == "cd" && len(f) > 1 {
				f = f[2:]
				continue
			}
			f = f[1:]
		}
		if len(f) == 0 {
			continue
		}
		switch p := filepath.Base(strings.Trim(f[0], `"'`)); {
		case p == "cat" || p == "head" || p == "tail" || p == "sed" || p == "nl" || p == "awk" || p == "less":
			return "shell read"
		case p == "grep" || p == "rg" || p == "find" || p == "ls" || p == "tree" || p == "wc":
			return "shell search"
		case p == "open" || p == "goto" || p == "scroll_down" || p == "scroll_up":
			return "read" // SWE-agent's file viewer
		case p == "find_file" || p == "search_dir" || p == "search_file":
			return "search"
		case p == "edit" || p == "create" || p == "insert" || p == "apply_patch":
			return "edit"
		case p == "git":
			return "shell git"
		case p == "gh" || p == "curl" || p == "wget" || p == "ssh":
			return "shell net"
		case strings.HasPrefix(p, "python") || strings.HasPrefix(f[0], "./") || slices.Contains([]string{"pytest", "tox", "make", "npm", "npx", "pnpm",
			"uv", "go", "cargo", "node", "pip", "sqlfluff", "golangci-lint", "nix"}, p):
			return "shell run"
		default:
			return "shell other"
		}
	}
	return "shell other"
}

func (a *attribution) String() string {
	var b strings.Builder
	costs := func(title string, m map[string]*attrCost) {
		fmt.Fprintf(&b, "%s: share of removable | preset removes of it (points of removable) | results\n", title)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			c := m[k]
			fmt.Fprintf(&b, "  %-40s %5.1f%% | %5.1f%% of it (%4.1f pts) | %d\n", k, 100*c.None/a.Removable, 100*(c.None-c.Kept)/max(c.None, 1), 100*(c.None-c.Kept)/a.Removable, c.N)
		}
	}
	ints := func(title string, m, of map[string]int) {
		fmt.Fprintf(&b, "%s:", title)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if of != nil {
				fmt.Fprintf(&b, " [%s %d/%d]", k, m[k], of[k])
			} else {
				fmt.Fprintf(&b, " [%s %d]", k, m[k])
			}
		}
		b.WriteString("\n")
	}
	tot := 0.0
	for _, c := range a.Use {
		tot += c.None - c.Kept
	}
	fmt.Fprintf(&b, "char-weighted removed by the preset: %.1f%% of removable\n", 100*tot/a.Removable)
	costs("by use", a.Use)
	costs("by size band", a.Band)
	costs("by kind", a.Kind)
	costs("clears for cost", a.Clears)
	lost := 0
	for _, n := range a.Lost {
		lost += n
	}
	fmt.Fprintf(&b, "needles %d, lost %d (%.1f%% visible)\n", a.Needles, lost, 100*(1-float64(lost)/max(float64(a.Needles), 1)))
	ints("lost by cause", a.Lost, nil)
	ints("lost/needles by band", a.LostB, a.NeedB)
	ints("lost/needles by kind", a.LostK, a.NeedK)
	ints("ceiling-lost by position; clear-lost by past use", a.LostPos, nil)
	ints("needles of results ≥ 1k by age", a.Age, nil)
	fmt.Fprintf(&b, "cleared after quoted: lines within 3 of a quoted needle are %.1f%% of their chars; they hold %d of the %d needles clears hid from them\n",
		100*a.Quoted.Kept/max(a.Quoted.None, 1), a.QuotedNear, a.QuotedLost)
	clearTot := 0.0
	for k, c := range a.ClearBand {
		if !strings.Contains(k, " / ") {
			clearTot += c.None
		}
	}
	fmt.Fprintf(&b, "clears for cost by shown size: share of their removal | needles lost | lost per 10k chars removed | results\n")
	for _, k := range slices.Sorted(maps.Keys(a.ClearBand)) {
		c := a.ClearBand[k]
		fmt.Fprintf(&b, "  %-34s %5.1f%% | %4d | %6.3f | %d\n", k, 100*c.None/max(clearTot, 1), a.ClearLost[k], 1e4*float64(a.ClearLost[k])/max(c.None, 1), c.N)
	}
	clearLost := 0
	for k, n := range a.ClearLost {
		if !strings.Contains(k, " / ") {
			clearLost += n
		}
	}
	fmt.Fprintf(&b, "  %-34s %5.1f%% | %4d | %6.3f | removal %.0f chars, %.1f%% of removable\n", "all", 100.0, clearLost, 1e4*float64(clearLost)/max(clearTot, 1), clearTot, 100*clearTot/max(a.Removable, 1))
	recency := func(title string, cost, again map[string]*attrCost, lost map[string]int) {
		removed := 0.0
		for _, c := range cost {
			removed += c.None - c.Kept
		}
		fmt.Fprintf(&b, "%s: share of the clears' removal | used again after the clear (by cost) | needles the clears hid | results\n", title)
		for _, k := range slices.Sorted(maps.Keys(cost)) {
			c, ag := cost[k], 0.0
			if g := again[k]; g != nil {
				ag = g.None - g.Kept
			}
			fmt.Fprintf(&b, "  %-8s %5.1f%% | %5.1f%% | %d | %d\n", k, 100*(c.None-c.Kept)/max(removed, 1), 100*ag/max(c.None-c.Kept, 1), lost[k], c.N)
		}
	}
	fmt.Fprintf(&b, "by command and size: share of removable | preset removes of it | results | needles\n")
	for _, k := range slices.Sorted(maps.Keys(a.Cmd)) {
		c := a.Cmd[k]
		if c.None/a.Removable < 0.003 {
			continue
		}
		fmt.Fprintf(&b, "  %-40s %5.1f%% | %5.1f%% | %d | %d\n", k, 100*c.None/a.Removable, 100*(c.None-c.Kept)/max(c.None, 1), c.N, a.NeedC[k])
	}
	fmt.Fprintf(&b, "removable left A requests after arrival, by use by then: share of removable | results\n")
	for _, k := range slices.Sorted(maps.Keys(a.Unquoted)) {
		fmt.Fprintf(&b, "  %-44s %5.1f%% | %d\n", k, 100*a.Unquoted[k].None/a.Removable, a.Unquoted[k].N)
	}
	costs("never used, by command, size, requests it lives, fate and what its own clear would repay", a.Never)
	recency("clears for cost by rounds from the last use to the clear", a.Recency, a.Again, a.RecencyLost)
	recency("the same, by rounds from the last use to the 3rd round after the mark", a.Horizon, a.HorizonAgain, a.HorizonLost)
	fmt.Fprintf(&b, "removable beyond age (results ≥ 1k):")
	for _, k := range slices.Sorted(maps.Keys(a.Beyond)) {
		fmt.Fprintf(&b, " [%s %.1f%%]", k, 100*a.Beyond[k].None/a.Removable)
	}
	b.WriteString("\n")
	return b.String()
}
