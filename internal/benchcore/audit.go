package benchcore

import (
	"context"
	"encoding/json"
	"math"
	"regexp"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/agentharness/harness/internal/toolschema"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/canonjson"
	"github.com/agentharness/harness/internal/replayengine"
	"github.com/agentharness/harness/provider/catalog"
	"github.com/agentharness/harness/replay"
)

// Audit is what one recording cost and where its context went.
type Audit struct {
	Recording string `json:"recording"`
	Source    string `json:"source"`
	Format    string `json:"format"`
	Model     string `json:"model,omitempty"`
	Calls     int    `json:"calls"`
	// Recorded is the usage the provider billed, as recorded.
	Recorded harness.Usage `json:"recorded_usage"`
	Turns    []AuditTurn   `json:"turns"`
	// Largest lists the largest results (at most 10), largest first.
	Largest []AuditResult `json:"largest"`
	// ExactRepeats are calls that repeat an earlier call's tool and
	// arguments; OverlappingReads are reads of a file whose line range
	// overlaps an earlier read of it.
	ExactRepeats     []Repeat `json:"exact_repeats"`
	OverlappingReads []Repeat `json:"overlapping_reads"`
	// Presets is what each preset would have cost (cells in Presets order).
	Presets []string  `json:"presets"`
	Costs   []Figures `json:"costs"`
	// Pricings names the price models the text shows (default
	// defaultPricings); Costs carries every one.
	Pricings []string `json:"-"`
	// Cumulative holds, per preset, the cumulative input tokens after each
	// model call; CumulativeCost the cumulative effective tokens (uncached
	// + 0.1 × cached + 4 × output, rounded), what the chart plots.
	Cumulative     [][]int `json:"cumulative_input"`
	CumulativeCost [][]int `json:"cumulative_effective"`
}

// AuditTurn is one user turn's figures, under "none" (everything shown).
type AuditTurn struct {
	Index int `json:"index"`
	// Rounds holds, per model call, the evidence characters of its request
	// by tool.
	Rounds []map[string]int `json:"rounds"`
	// EvidenceChars sums the evidence of every request of the turn;
	// PeakEvidenceChars is the largest request's.
	EvidenceChars     int `json:"evidence_chars"`
	PeakEvidenceChars int `json:"peak_evidence_chars"`
	// ToolSchemas counts schemas serialized (tools × requests), and their
	// bytes.
	ToolSchemas     int `json:"tool_schemas"`
	ToolSchemaBytes int `json:"tool_schema_bytes"`
}

// AuditResult is one tool result.
type AuditResult struct {
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	Args   string `json:"args"`
	Chars  int    `json:"chars"`
	Turn   int    `json:"turn"`
	Call   int    `json:"call"`
}

// Repeat is a call that repeats (or overlaps) an earlier one.
type Repeat struct {
	CallID string `json:"call_id"`
	Of     string `json:"of"`
	// Call and OfCall are the model calls (from 1, as in Largest and the
	// charts) whose results they are.
	Call    int    `json:"model_call"`
	OfCall  int    `json:"of_model_call"`
	Tool    string `json:"tool"`
	Args    string `json:"args"`
	Path    string `json:"path,omitempty"`
	Overlap string `json:"overlap,omitempty"`
	Chars   int    `json:"chars"`
}

// auditAll audits every recording: the structure from the recording and
// the cost of each preset (all presets when presets is empty) by replay.
func auditAll(ctx context.Context, recs []*replay.Recording, presets []Preset, progress func(done, total int)) ([]Audit, error) {
	r, err := AuditRecordings(ctx, recs, &Options{Presets: presets, Progress: progress})
	if err != nil {
		return nil, err
	}
	return r.Audits, nil
}

// AuditReport is the audit of a set of recordings (a user's history): each
// recording's audit, and what each preset would have cost them all.
type AuditReport struct {
	Audits []Audit
	// Total is the presets' figures summed over every recording, as
	// harness bench prints them: the ratio to none under each price, the
	// share of the removable cost removed, the recordings above 1.01 ×
	// none and the worst, cache breaks and evidence retention.
	Total *Table
	// Prices prices the headline WriteText opens with (nil:
	// catalog.ListPrices).
	Prices *catalog.Prices
}

// AuditRecordings is auditAll with the presets' figures over all the
// recordings (AuditReport.Total), from the same replays. Of opts (nil:
// every preset), Presets, Workers, Progress and CacheTTL apply.
func AuditRecordings(ctx context.Context, recs []*replay.Recording, opts *Options) (*AuditReport, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Through = nil
	tab, reports, err := RunReports(ctx, o, recs)
	if err != nil {
		return nil, err
	}
	var out []Audit
	for i, rec := range recs {
		a := auditOne(rec, reports[i][0])
		for p, row := range tab.Rows {
			a.Presets = append(a.Presets, row.Preset)
			a.Costs = append(a.Costs, tab.Runs[i].Cells[p])
			cum, cost, total, effective := make([]int, 0, len(reports[i][p].Calls)), make([]int, 0, len(reports[i][p].Calls)), 0, 0.0
			for _, c := range reports[i][p].Calls {
				total += c.Input
				effective += harness.Usage{Input: c.Input, Cached: c.Cached, Output: c.Output}.Effective()
				cum, cost = append(cum, total), append(cost, int(math.Round(effective)))
			}
			a.Cumulative, a.CumulativeCost = append(a.Cumulative, cum), append(a.CumulativeCost, cost)
		}
		out = append(out, a)
	}
	return &AuditReport{Audits: out, Total: tab}, nil
}

func auditOne(rec *replay.Recording, none *replayengine.Report) Audit {
	a := Audit{Recording: rec.ID, Source: rec.Source, Format: rec.Format, Model: rec.Model, Calls: rec.Calls(), Recorded: rec.RecordedUsage()}
	tools := map[string]string{}
	var all []AuditResult
	type prior struct {
		id, key, path string
		from, to      int
		call          int
	}
	var reads []prior
	n := 0
	for ti, t := range rec.Turns {
		at := AuditTurn{Index: ti + 1}
		for _, c := range t.Calls {
			st := none.Calls[n]
			n++
			byTool := map[string]int{}
			for _, sh := range st.Shown {
				byTool[tools[sh.CallID]] += sh.Chars
			}
			at.Rounds = append(at.Rounds, byTool)
			at.EvidenceChars += st.EvidenceChars
			at.PeakEvidenceChars = max(at.PeakEvidenceChars, st.EvidenceChars)
			at.ToolSchemas += st.Tools
			if st.Tools > 0 {
				for _, tl := range rec.Tools {
					at.ToolSchemaBytes += toolschema.Bytes(tl.Name, tl.Description, tl.InputSchema)
				}
			}
			for _, r := range c.Results {
				var call harness.ToolCall
				for _, tc := range c.Assistant.ToolCalls {
					if tc.ID == r.CallID {
						call = tc
					}
				}
				tools[r.CallID] = call.Name
				chars := utf8.RuneCountInString(r.FullText())
				all = append(all, AuditResult{CallID: r.CallID, Tool: call.Name, Args: string(call.Args), Chars: chars, Turn: ti + 1, Call: n})
				key := call.Name + "(" + canonjson.OrRaw(call.Args) + ")"
				path, from, to, IsRead := readRange(call)
				for _, p := range reads {
					if p.key == key {
						a.ExactRepeats = append(a.ExactRepeats, Repeat{CallID: r.CallID, Of: p.id, Call: n, OfCall: p.call, Tool: call.Name, Args: string(call.Args), Path: path, Chars: chars})
						break
					}
					if IsRead && p.path == path && from <= p.to && p.from <= to {
						a.OverlappingReads = append(a.OverlappingReads, Repeat{CallID: r.CallID, Of: p.id, Call: n, OfCall: p.call, Tool: call.Name, Args: string(call.Args), Path: path,
							Overlap: rangeText(max(from, p.from), min(to, p.to)), Chars: chars})
						break
					}
				}
				reads = append(reads, prior{id: r.CallID, key: key, path: path, from: from, to: to, call: n})
			}
		}
		a.Turns = append(a.Turns, at)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Chars > all[j].Chars })
	a.Largest = all[:min(10, len(all))]
	return a
}

func rangeText(from, to int) string {
	if to == math.MaxInt {
		return "lines " + strconv.Itoa(from) + "–end"
	}
	return "lines " + strconv.Itoa(from) + "–" + strconv.Itoa(to)
}

var (
	sedRange = regexp.MustCompile(`sed -n ['"]?(\d+),(\d+)p['"]?\s+(\S+)`)
	catSed   = regexp.MustCompile(`(?:cat -n|nl -ba|cat)\s+(\S+)\s*\|\s*sed -n ['"]?(\d+),(\d+)p`)
	catHead  = regexp.MustCompile(`(?:cat -n|nl -ba|cat)\s+(\S+)\s*\|\s*head -(?:n\s*)?(\d+)`)
	headN    = regexp.MustCompile(`head -(?:n\s*)?(\d+)\s+(\S+)`)
	catFile  = regexp.MustCompile(`^\s*(?:cat|nl -ba|cat -n)\s+(\S+)\s*$`)
)

// readRange recognises a read of a file's lines: a read tool's path with
// offset and limit, or a shell command "sed -n 'A,Bp' FILE", "cat -n FILE
// | sed -n 'A,Bp'", "head -n N FILE", "cat FILE | head -N" or "cat FILE".
// A whole-file read is lines 1 to the end.
func readRange(call harness.ToolCall) (path string, from, to int, ok bool) {
	var a map[string]any
	if json.Unmarshal(call.Args, &a) != nil {
		return "", 0, 0, false
	}
	num := func(k string) int {
		switch v := a[k].(type) {
		case float64:
			return int(v)
		case string:
			n, _ := strconv.Atoi(v)
			return n
		}
		return 0
	}
	if IsRead(call.Name) {
		p, _ := a["path"].(string)
		if p == "" {
			return "", 0, 0, false
		}
		from, to = max(num("offset"), 1), math.MaxInt
		if l := num("limit"); l > 0 {
			to = from + l - 1
		}
		return p, from, to, true
	}
	if !IsShell(call.Name) {
		return "", 0, 0, false
	}
	cmd, _ := a["command"].(string)
	if m := catSed.FindStringSubmatch(cmd); m != nil {
		f, _ := strconv.Atoi(m[2])
		t, _ := strconv.Atoi(m[3])
		return m[1], f, t, true
	}
	if m := catHead.FindStringSubmatch(cmd); m != nil {
		n, _ := strconv.Atoi(m[2])
		return m[1], 1, n, true
	}
	if m := sedRange.FindStringSubmatch(cmd); m != nil {
		f, _ := strconv.Atoi(m[1])
		t, _ := strconv.Atoi(m[2])
		return m[3], f, t, true
	}
	if m := headN.FindStringSubmatch(cmd); m != nil {
		n, _ := strconv.Atoi(m[1])
		return m[2], 1, n, true
	}
	if m := catFile.FindStringSubmatch(cmd); m != nil {
		return m[1], 1, math.MaxInt, true
	}
	return "", 0, 0, false
}
