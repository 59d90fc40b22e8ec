package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteAuditText prints each audit as readable tables.
func WriteAuditText(w io.Writer, audits []Audit) error {
	for _, a := range audits {
		fmt.Fprintf(w, "== %s (%s, %s, %d model calls; recorded: %d input tokens, %d cached, %d output)\n",
			a.Recording, a.Source, a.Format, a.Calls, a.Recorded.Input, a.Recorded.Cached, a.Recorded.Output)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "turn\trequests\tevidence chars\tpeak request\ttool schemas sent\tschema bytes\t\n")
		for _, t := range a.Turns {
			fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t\n", t.Index, len(t.Rounds), t.EvidenceChars, t.PeakEvidenceChars, t.ToolSchemas, t.ToolSchemaBytes)
		}
		tw.Flush()
		fmt.Fprintln(w, "largest results:")
		for _, r := range a.Largest {
			fmt.Fprintf(w, "  %9d chars  %s %s (call %d)\n", r.Chars, r.Tool, clip(r.Args, 90), r.Call)
		}
		fmt.Fprintf(w, "repeated reads: %d exact, %d overlapping line ranges of one file\n", len(a.ExactRepeats), len(a.OverlappingReads))
		for _, r := range a.OverlappingReads[:min(5, len(a.OverlappingReads))] {
			fmt.Fprintf(w, "  %s %s overlaps %s\n", r.Path, r.Overlap, r.Of)
		}
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "preset\teffective tokens\t× none\tcached\tvisible\trecoverable\ttool schemas sent\t\n")
		for i, p := range a.Presets {
			c := a.Costs[i]
			fmt.Fprintf(tw, "%s\t%.0f\t%.3f\t%.1f%%\t%d/%d\t%d/%d\t%d\t\n", p, c.Effective, c.Ratio, 100*c.CachedShare, c.Visible, c.Needles, c.Recoverable, c.Needles, c.ToolSchemas)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return nil
}

// clip shortens s to n characters with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
