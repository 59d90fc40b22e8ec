package benchcore

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// writeAuditText prints each audit as readable tables, and the notes on
// their columns once, at the end.
func writeAuditText(w io.Writer, audits []Audit) error {
	if err := writeAudits(w, audits); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, ColumnNotes)
	return err
}

// WriteText prints the headline (when the harness-proxy preset ran: what
// harness proxy would have saved, in plain words), each recording's audit
// (as writeAuditText does), then
// the presets' figures over all of them (Total, as harness bench prints a
// table) with the notes on the columns: the answer to what harness, and
// each other system's rules, would have saved on the whole history.
func (r *AuditReport) WriteText(w io.Writer) error {
	if h, ok := r.Headline(r.Prices); ok {
		if err := h.WriteText(w); err != nil {
			return err
		}
	}
	if err := writeAudits(w, r.Audits); err != nil {
		return err
	}
	if r.Total == nil {
		_, err := fmt.Fprintln(w, ColumnNotes)
		return err
	}
	fmt.Fprintf(w, "== in total: %s recordings, %s model calls\n", thousands(len(r.Total.Runs)), thousands(auditCalls(r.Audits)))
	return r.Total.WriteText(w)
}

// auditCalls sums the model calls of audits.
func auditCalls(audits []Audit) int {
	n := 0
	for _, a := range audits {
		n += a.Calls
	}
	return n
}

// writeAudits prints each audit's tables, without the column notes.
func writeAudits(w io.Writer, audits []Audit) error {
	for _, a := range audits {
		fmt.Fprintf(w, "== %s (%s, %s, %s model calls; recorded: %s input tokens, %s cached, %s output)\n",
			a.Recording, a.Source, a.Format, num(a.Calls), num(a.Recorded.Input), num(a.Recorded.Cached), num(a.Recorded.Output))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "turn\trequests\tevidence chars\tpeak request\ttool schemas sent\tschema bytes\t\n")
		for _, t := range a.Turns {
			fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t\n", t.Index, len(t.Rounds), num(t.EvidenceChars), num(t.PeakEvidenceChars), num(t.ToolSchemas), num(t.ToolSchemaBytes))
		}
		tw.Flush()
		fmt.Fprintln(w, "largest results:")
		for _, r := range a.Largest {
			fmt.Fprintf(w, "  %11s chars  %s %s (model call %d)\n", num(r.Chars), r.Tool, clip(r.Args, 90), r.Call)
		}
		fmt.Fprintf(w, "repeated reads: %d exact, %d overlapping line ranges of one file\n", len(a.ExactRepeats), len(a.OverlappingReads))
		for _, r := range a.OverlappingReads[:min(5, len(a.OverlappingReads))] {
			fmt.Fprintf(w, "  model call %d: %s %s overlaps model call %d (%s)\n", r.Call, r.Path, r.Overlap, r.OfCall, r.Of)
		}
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		ps := (&Table{Pricings: a.Pricings}).shown()
		fmt.Fprint(tw, "preset\tkind\teffective tokens\t")
		for _, pr := range ps {
			fmt.Fprintf(tw, "× none %s\t", pr.Name)
		}
		fmt.Fprintf(tw, "cached\tvisible\trecoverable\ttool schemas sent\tcache breaks\t\n")
		for i, p := range a.Presets {
			c := a.Costs[i]
			fmt.Fprintf(tw, "%s\t%s\t%s\t", p, Kind(p), num(int(math.Round(c.Effective))))
			for _, pr := range ps {
				fmt.Fprintf(tw, "%.3f\t", c.Ratios[pr.Name])
			}
			fmt.Fprintf(tw, "%.1f%%\t%s/%s\t%s/%s\t%s\t%s\t\n", 100*c.CachedShare,
				num(c.Visible), num(c.Needles), num(c.Recoverable), num(c.Needles), num(c.ToolSchemas), num(c.CacheBreaks))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if err := writeAuditCuts(w, a, ps[0]); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return nil
}

// writeAuditCuts prints, when the audit lists cuts (Options.Cuts), those
// of harness's presets on a's recording.
func writeAuditCuts(w io.Writer, a Audit, price Pricing) error {
	var tw *tabwriter.Writer
	name := a.Recording
	for i, p := range a.Presets {
		if Kind(p) != "ours" {
			continue
		}
		for _, cut := range a.Costs[i].Cuts {
			if tw == nil {
				tw = cutsHeader(w, price)
			}
			writeCutLine(tw, name, p, cut, price)
			name = ""
		}
	}
	if tw == nil {
		return nil
	}
	return tw.Flush()
}

// clip shortens s to n characters with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
