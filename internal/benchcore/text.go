package benchcore

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentharness/harness/internal/numfmt"
)

// WriteText prints the table: one line per preset with effective tokens,
// the ratio to none, the cached share of input, retention (visible and
// recoverable) and how many recordings cost more than none; then which
// recordings are output-heavy (one line, see [Weigh]).
func (t *Table) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	writeHeader(tw, t.shown())
	writeRows(tw, t.Rows, len(t.Runs), t.shown())
	if err := tw.Flush(); err != nil {
		return err
	}
	return t.writeNotes(w)
}

// WritePerRun prints what WriteText prints, with the summed rows of the
// output-heavy recordings as a second row group of the table, then one
// line per recording and preset: effective tokens, the ratio to none on
// that recording, what the preset saved against none and what its
// re-reads cost under the first price model shown (with the rounds and
// the needles lost), the cached share and retention, each recording's
// first line giving the largest result's share of its tool output and
// whether that makes it output-heavy; then, when the runs list their cuts
// (Options.Cuts), one line per cut.
func (t *Table) WritePerRun(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	writeHeader(tw, t.shown(), "recordings")
	groups := []struct {
		label string
		rows  []Row
		runs  int
	}{
		{fmt.Sprintf("all %d", len(t.Runs)), t.Rows, len(t.Runs)},
		{fmt.Sprintf("output-heavy %d", len(t.OutputHeavy.Recordings)), t.OutputHeavy.Rows, len(t.OutputHeavy.Recordings)},
	}
	for _, g := range groups {
		for i, r := range g.rows {
			label := ""
			if i == 0 {
				label = g.label
			}
			fmt.Fprintf(tw, "%s\t", label)
			writeRows(tw, []Row{r}, g.runs, t.shown())
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := t.writeNotes(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	price := t.shown()[0]
	fmt.Fprintf(tw, "recording\tlargest result\toutput-heavy\tpreset\tkind\teffective tokens\t× none\tsaved %s\tre-reads\tre-read cost\tlost\tcached\tvisible\trecoverable\t\n", price.Name)
	for _, run := range t.Runs {
		for p, c := range run.Cells {
			name, largest, heavy := "", "", ""
			if p == 0 {
				name, largest, heavy = run.Recording, fmt.Sprintf("%s of %s = %.1f%%", thousands(run.LargestChars), thousands(run.ResultChars), 100*run.LargestShare), "no"
				if run.OutputHeavy {
					heavy = "yes"
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.3f\t%s\t%d\t%s\t%d\t%.1f%%\t%.1f%%\t%.1f%%\t\n", name, largest, heavy, t.Rows[p].Preset, Kind(t.Rows[p].Preset),
				thousands(int(math.Round(c.Effective))), c.Ratio,
				signed(run.Cells[0].Costs[price.Name]-c.Costs[price.Name]), c.RecoveryRounds, signed(c.CostsWithRecovery[price.Name]-c.Costs[price.Name]), c.LostNeedles,
				100*c.CachedShare, 100*c.VisibleShare, 100*c.RecoverableShare)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return t.writeCuts(w, price)
}

// shown returns the price models the text columns use: t.Pricings, or
// defaultPricings.
func (t *Table) shown() []Pricing {
	names := t.Pricings
	if len(names) == 0 {
		names = defaultPricings
	}
	var out []Pricing
	for _, n := range names {
		if p, err := lookupPricing(n); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// priceGroups are the groups of columns with one column per price model,
// in the order writeRows prints them.
var priceGroups = [...]string{"× none", "removed", "with re-reads"}

// writeHeader prints the table's two header lines: the groups of columns
// that have one column per price model, each label over its group's last
// column, then the columns, lead first (a per-run table's "recordings"),
// named by price model within a group. Two lines keep the table narrow
// enough for a terminal: the price model's name is not repeated in three
// long headers.
func writeHeader(tw io.Writer, ps []Pricing, lead ...string) {
	cols := append(lead, "preset", "kind", "effective tokens")
	if len(ps) > 0 {
		fmt.Fprint(tw, strings.Repeat("\t", len(cols)))
		for _, g := range priceGroups {
			fmt.Fprint(tw, strings.Repeat("\t", len(ps)-1), g, "\t")
		}
		fmt.Fprint(tw, "\n")
	}
	fmt.Fprint(tw, strings.Join(cols, "\t"), "\t")
	for range priceGroups {
		for _, p := range ps {
			fmt.Fprintf(tw, "%s\t", p.Name)
		}
	}
	fmt.Fprintf(tw, "lost\tcached\tvisible\trecoverable\tabove none\t> 1.01×\tworst\tbreaks/100\t\n")
}

// ColumnNotes explains the columns that are not self-evident (kind,
// needles, above none); it is printed under every table and in the CLI's
// help.
const ColumnNotes = `kind: ours (harness's defaults), other system (its documented rules), baseline (none), bound (floor: no tool
  output; oracle: only the results the agent will use, whole, the rest empty)
needles: strings the agent used (in a later call or its answer) that first reached it in a tool result;
  visible = still shown in the request that used them, recoverable = visible or held by a spill file or the store
above none: recordings on which the preset cost more effective tokens than keeping everything
× none, one column per price model: cost ÷ none's under that model (openai: cached 0.1, output 4, = effective tokens;
  openai-4.1: cached 0.25; anthropic: cache reads 0.1, uncached input written to the cache at 1.25; nocache: 1; output 4 in each)
removed: share of the removable cost (none − floor) the preset removes under each price model: 0 for none, 1 for floor
> 1.01×, worst: recordings costing more than 1.01 × none under any price model, and the worst such ratio
breaks/100: cache breaks per 100 requests (a request whose cached prefix is shorter than the previous request's)
with re-reads: as × none, with a round priced before each request that uses needles it no longer shows:
  a page of the spill file or the store around them, or the read-only call run again (docs/design.md, "Re-reads priced")
lost: needles no read-only path brings back (no copy kept, and the call that returned them was not read-only)`

// writeRows prints one line per row; runs is how many recordings the rows
// sum.
func writeRows(tw io.Writer, rows []Row, runs int, ps []Pricing) {
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t", r.Preset, Kind(r.Preset), thousands(int(math.Round(r.Effective))))
		for _, p := range ps {
			fmt.Fprintf(tw, "%.3f\t", r.Ratios[p.Name])
		}
		for _, p := range ps {
			if v, ok := r.Removed[p.Name]; ok {
				fmt.Fprintf(tw, "%.1f%%\t", 100*v)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		for _, p := range ps {
			fmt.Fprintf(tw, "%.3f\t", r.RatiosWithRecovery[p.Name])
		}
		fmt.Fprintf(tw, "%d\t", r.LostNeedles)
		breaks := 0.0
		if r.Calls > 0 {
			breaks = 100 * float64(r.CacheBreaks) / float64(r.Calls)
		}
		fmt.Fprintf(tw, "%.1f%%\t%.1f%%\t%.1f%%\t%d/%d\t%d/%d\t%.3f\t%.1f\t\n", 100*r.CachedShare, 100*r.VisibleShare, 100*r.RecoverableShare,
			r.AboveNone, runs, r.AboveTolerance, runs, r.Worst, breaks)
	}
}

// writeNotes prints the lines under the table: what was summed, unoffered
// calls, and the output-heavy recordings.
func (t *Table) writeNotes(w io.Writer) error {
	needles := 0
	if len(t.Rows) > 0 {
		needles = t.Rows[0].Needles
	}
	var names []string
	for _, p := range t.shown() {
		names = append(names, p.Name)
	}
	if _, err := fmt.Fprintf(w, "%s recordings, %s needles; effective = uncached + 0.1 × cached + 4 × output tokens (o200k); pricing: %s; %s\n%s\n",
		thousands(len(t.Runs)), thousands(needles), strings.Join(names, ", "), t.CacheNote(), ColumnNotes); err != nil {
		return err
	}
	for _, r := range t.Rows {
		if r.Unoffered > 0 {
			if _, err := fmt.Fprintf(w, "%s: %s recorded call(s) went to a tool its selection did not offer, priced as a reveal round (a request whose error result carries the schema) before each turn's first call of each such tool; %s reveal round(s) in all\n",
				r.Preset, thousands(r.Unoffered), thousands(r.RevealRounds)); err != nil {
				return err
			}
		}
	}
	_, err := fmt.Fprintf(w, "output-heavy (largest tool result ≥ %s chars and ≥ 1/3 of all result chars): %d of %d%s\n",
		thousands(heavyMinChars), len(t.OutputHeavy.Recordings), len(t.Runs), t.heavyNames(3))
	return err
}

// heavyNames lists up to n output-heavy recordings with their largest
// result's share, as ": a (51.5%), b (98.0%) and 2 more".
func (t *Table) heavyNames(n int) string {
	var names []string
	more := 0
	for _, run := range t.Runs {
		if !run.OutputHeavy {
			continue
		}
		if len(names) == n {
			more++
			continue
		}
		names = append(names, fmt.Sprintf("%s (%.1f%%)", run.Recording, 100*run.LargestShare))
	}
	if len(names) == 0 {
		return ""
	}
	s := ": " + strings.Join(names, ", ")
	if more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// signed writes a cost rounded to a whole token with separators and its
// sign when negative (-1,234).
func signed(v float64) string {
	n := int(math.Round(v))
	if n < 0 {
		return "-" + thousands(-n)
	}
	return thousands(n)
}

// thousands writes n with comma separators (10,000).
func thousands(n int) string { return numfmt.Thousands(int64(n)) }

// CacheNote says how the table priced the prompt cache (CacheNote of
// its CacheTTL).
func (t *Table) CacheNote() string { return CacheNote(t.CacheTTL) }

// CacheNote says how a cache lifetime prices the prompt cache: "cache
// expires after 5m idle" (a request after a longer recorded pause pays
// its prefix uncached) or, for 0, "cache never expires (warm)".
func CacheNote(ttl time.Duration) string {
	if ttl <= 0 {
		return "cache never expires (warm)"
	}
	return "cache expires after " + shortDuration(ttl) + " idle"
}

// shortDuration is d as time.Duration prints it without zero trailing
// units: 5m, 1h, 1h30m, 90s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
