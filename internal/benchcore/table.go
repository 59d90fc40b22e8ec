package benchcore

import (
	"math"
	"time"

	"github.com/agentharness/harness/internal/replayengine"
	"github.com/agentharness/harness/replay"
)

// Table is the outcome of a bench run: one row per preset, summed over
// every recording, and the per-recording figures behind it.
type Table struct {
	Recordings []string `json:"recordings"`
	Rows       []Row    `json:"presets"`
	// Runs holds, per recording, one cell per preset (in Rows' order).
	Runs []RunRow `json:"runs"`
	// OutputHeavy sums the output-heavy recordings only (see [Weigh]):
	// each preset's ratio to none and retention over those runs.
	OutputHeavy Subset `json:"output_heavy"`
	// Pricings names the price models the text tables show (default
	// defaultPricings); the JSON carries the cost under every one.
	Pricings []string `json:"-"`
	// CacheTTL is the prompt cache's lifetime the costs were priced with
	// (Options.CacheTTL; in the JSON, nanoseconds as time.Duration
	// marshals); 0 when the cache never expires (Options.NoCacheExpiry).
	CacheTTL time.Duration `json:"cache_ttl"`
	// CacheTTLSeconds is CacheTTL in seconds, for readers of the JSON
	// that do not know Go's durations (300 for the default 5 minutes).
	CacheTTLSeconds float64 `json:"cache_ttl_seconds"`
}

// Figures are the measured totals of one preset on some recordings.
type Figures struct {
	Calls        int `json:"calls"`
	SkippedCalls int `json:"skipped_calls"`
	Input        int `json:"input_tokens"`
	Cached       int `json:"cached_tokens"`
	Output       int `json:"output_tokens"`
	// Effective is uncached + 0.1 × cached + 4 × output.
	Effective float64 `json:"effective_tokens"`
	// Ratio is Effective ÷ the Effective of "none" on the same recordings.
	Ratio float64 `json:"ratio_to_none"`
	// CachedShare is Cached ÷ Input.
	CachedShare float64 `json:"cached_share"`
	// EvidenceChars sums the tool-result characters of every request.
	EvidenceChars int `json:"evidence_chars"`
	Needles       int `json:"needles"`
	Visible       int `json:"visible"`
	Recoverable   int `json:"recoverable"`
	// VisibleShare and RecoverableShare are Visible and Recoverable ÷
	// Needles (1 when there are no needles).
	VisibleShare     float64 `json:"visible_share"`
	RecoverableShare float64 `json:"recoverable_share"`
	// ToolSchemas counts the tool schemas sent (tools offered × requests)
	// and ToolTokens their tokens.
	ToolSchemas int `json:"tool_schemas"`
	ToolTokens  int `json:"tool_tokens"`
	// Unoffered counts recorded calls to a tool the preset's selection did
	// not offer that turn (see replayengine.Report.Unoffered).
	Unoffered int `json:"unoffered_calls"`
	// RevealRounds counts the requests the replay added before a recorded
	// call whose tool the list did not show whole, a deferred tool's stub
	// or a tool the selection did not offer (replayengine.CallStat of Index 0);
	// Calls includes them. Absent when 0.
	RevealRounds int `json:"reveal_rounds,omitempty"`
	// Costs is the cost under each price model of [Pricings], by name,
	// and Ratios each one ÷ none's cost under the same model.
	Costs  map[string]float64 `json:"costs"`
	Ratios map[string]float64 `json:"ratios_to_none"`
	// CacheBreaks counts requests whose cached prefix shrank (see
	// [CacheBreaks]).
	CacheBreaks int `json:"cache_breaks"`
	// CostsWithRecovery is the cost under each price model with the
	// rounds a live agent makes to read back the needles a request no
	// longer shows priced in (replayengine.Recovery: a page of a spill file or
	// the store, or the read-only call run again), and RatiosWithRecovery
	// each one ÷ none's cost; RecoveryRounds counts those rounds.
	// LostNeedles counts the needles no read-only path brings back.
	CostsWithRecovery  map[string]float64 `json:"costs_with_recovery"`
	RatiosWithRecovery map[string]float64 `json:"ratio_with_recovery"`
	RecoveryRounds     int                `json:"recovery_rounds"`
	LostNeedles        int                `json:"lost_needles"`
	// Cuts lists, in a run's cell when Options.Cuts asks for them, each
	// result the preset cut on that recording (see [Cut]).
	Cuts []Cut `json:"cuts,omitempty"`
}

// Row is one preset's totals.
type Row struct {
	Preset string `json:"preset"`
	// Kind is ours, other system, ablation, idea, baseline or bound (see
	// [Kind]).
	Kind     string `json:"kind"`
	Doc      string `json:"doc"`
	Ablation bool   `json:"ablation,omitempty"`
	Figures
	// AboveNone counts recordings on which the preset cost more than none.
	AboveNone int `json:"above_none"`
	Risk
}

// Tolerance is how much more than none one recording may cost before it
// counts in [Risk].AboveTolerance: 1.01 × none.
const Tolerance = 1.01

// Risk is what a preset risks run by run, over every price model of
// [Pricings]: how many recordings cost more than [Tolerance] × none under
// at least one of them, and the worst ratio of one recording to none
// under any of them. Removed is, per price model, the share of the
// removable cost (none − floor) the preset removes: 0 for none, 1 for
// floor; absent when floor was not run.
type Risk struct {
	AboveTolerance int                `json:"above_tolerance"`
	Worst          float64            `json:"worst_ratio"`
	Removed        map[string]float64 `json:"removed_share,omitempty"`
}

// judge adds one recording's cell, with none's cell on the same
// recording, to the risk figures.
func (k *Risk) judge(cell, none *Figures) {
	above := false
	for name, c := range cell.Costs {
		n := none.Costs[name]
		if n <= 0 {
			continue
		}
		r := c / n
		k.Worst = max(k.Worst, r)
		if c > Tolerance*n+1e-9 {
			above = true
		}
	}
	if above {
		k.AboveTolerance++
	}
}

// removed sets each row's share of the removable cost, when one of rows
// is floor (rows[0] is none).
func removed(rows []Row) {
	fl := -1
	for i := range rows {
		if rows[i].Preset == "floor" {
			fl = i
		}
	}
	if fl < 0 || len(rows) == 0 {
		return
	}
	for i := range rows {
		rows[i].Removed = map[string]float64{}
		for name, none := range rows[0].Costs {
			if span := none - rows[fl].Costs[name]; span > 0 {
				rows[i].Removed[name] = (none - rows[i].Costs[name]) / span
			}
		}
	}
}

// RunRow is one recording's figures under every preset, and the weight
// of its tool output (whether it is output-heavy).
type RunRow struct {
	Recording string `json:"recording"`
	Source    string `json:"source"`
	OutputWeight
	Cells []Figures `json:"cells"`
}

func (f *Figures) add(r *replayengine.Report) {
	f.Calls += len(r.Calls)
	f.SkippedCalls += r.SkippedCalls
	f.Input += r.Usage.Input
	f.Cached += r.Usage.Cached
	f.Output += r.Usage.Output
	f.Effective += tenths(r.Effective)
	for _, c := range r.Calls {
		f.EvidenceChars += c.EvidenceChars
		f.ToolSchemas += c.Tools
		f.ToolTokens += c.ToolTokens
		if c.Index == 0 {
			f.RevealRounds++
		}
	}
	f.Unoffered += len(r.Unoffered)
	f.Needles += r.Needles
	f.Visible += r.Visible
	f.Recoverable += r.Recoverable
	if f.Costs == nil {
		f.Costs = map[string]float64{}
	}
	for _, p := range Pricings() {
		for _, c := range r.Calls {
			f.Costs[p.Name] += p.Cost(c)
		}
	}
	f.CacheBreaks += CacheBreaks(r.Calls)
}

func (f *Figures) finish(noneEffective float64, noneCosts map[string]float64) {
	f.Effective = tenths(f.Effective)
	if none := tenths(noneEffective); none > 0 {
		f.Ratio = f.Effective / none
	}
	f.Ratios = map[string]float64{}
	for name, c := range f.Costs {
		f.Costs[name] = hundredths(c)
		if none := hundredths(noneCosts[name]); none > 0 {
			f.Ratios[name] = f.Costs[name] / none
		}
	}
	f.RatiosWithRecovery = map[string]float64{}
	for name, c := range f.CostsWithRecovery {
		f.CostsWithRecovery[name] = hundredths(c)
		if none := hundredths(noneCosts[name]); none > 0 {
			f.RatiosWithRecovery[name] = f.CostsWithRecovery[name] / none
		}
	}
	if f.Input > 0 {
		f.CachedShare = float64(f.Cached) / float64(f.Input)
	}
	f.VisibleShare, f.RecoverableShare = 1, 1
	if f.Needles > 0 {
		f.VisibleShare = float64(f.Visible) / float64(f.Needles)
		f.RecoverableShare = float64(f.Recoverable) / float64(f.Needles)
	}
}

// Summary folds replays into a Table, one recording at a time, in the
// order the recordings are given: the same sums in the same order whatever
// order the replays finished in.
type Summary struct {
	presets []Preset
	t       *Table
	ttl     time.Duration // the cache's lifetime (Options.cacheTTL); 0: never expires
	cuts    bool          // list each run's cuts (Options.Cuts); the reports keep Shown
}

// NewSummary starts the table of presets (none first), with the
// --through row last when th is set, pricing the cache with lifetime ttl
// (0: it never expires).
func NewSummary(presets []Preset, th *Through, ttl time.Duration) *Summary {
	if th != nil {
		presets = append(presets[:len(presets):len(presets)], th.preset())
	}
	t := &Table{Rows: make([]Row, len(presets)), CacheTTL: ttl, CacheTTLSeconds: ttl.Seconds()}
	for p, pr := range presets {
		t.Rows[p] = Row{Preset: pr.Name, Kind: Kind(pr.Name), Doc: pr.Doc, Ablation: pr.Ablation}
	}
	return &Summary{presets: presets, t: t, ttl: ttl}
}

// Add folds rec's reports, one per preset in the table's order.
func (s *Summary) Add(rec *replay.Recording, reps []*replayengine.Report) {
	t := s.t
	t.Recordings = append(t.Recordings, rec.ID)
	run := RunRow{Recording: rec.ID, Source: rec.Source, OutputWeight: Weigh(rec), Cells: make([]Figures, len(s.presets))}
	if s.ttl > 0 {
		gaps := replayengine.IdleGaps(rec)
		for _, rep := range reps {
			rep.PriceCold(gaps, s.ttl)
		}
	}
	hidden := hiddenUnderNone(reps[0])
	for p := range s.presets {
		run.Cells[p].add(reps[p])
		t.Rows[p].add(reps[p])
		run.Cells[p].addRecovery(reps[p], hidden)
		t.Rows[p].addRecovery(reps[p], hidden)
		if s.cuts && p > 0 {
			run.Cells[p].Cuts = cutsOf(reps[p], reps[0], chargedRounds(reps[p], hidden), hidden)
		}
	}
	none := run.Cells[0]
	for p := range s.presets {
		run.Cells[p].finish(none.Effective, none.Costs)
		if run.Cells[p].Effective > none.Effective+1e-9 {
			t.Rows[p].AboveNone++
		}
		t.Rows[p].judge(&run.Cells[p], &run.Cells[0])
	}
	t.Runs = append(t.Runs, run)
}

// Table finishes the totals.
func (s *Summary) Table() *Table {
	t := s.t
	none := t.Rows[0].Figures
	for p := range t.Rows {
		t.Rows[p].finish(none.Effective, none.Costs)
	}
	removed(t.Rows)
	t.OutputHeavy = t.subset(func(r *RunRow) bool { return r.OutputHeavy })
	return t
}

// tenths rounds effective tokens to a tenth, the finest figure they have
// (0.1 × cached): sums of 0.1 × n otherwise carry float noise into the
// JSON (482617.99999999994).
func tenths(v float64) float64 { return math.Round(v*10) / 10 }

// hundredths rounds a priced cost to a hundredth: the weights of
// [Pricings] are multiples of 0.05.
func hundredths(v float64) float64 { return math.Round(v*100) / 100 }
