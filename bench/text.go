package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText prints the table: one line per preset with effective tokens,
// the ratio to none, the cached share of input, retention (visible and
// recoverable) and how many recordings cost more than none.
func (t *Table) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "preset\teffective tokens\t× none\tcached\tvisible\trecoverable\tabove none\t\n")
	for _, r := range t.Rows {
		fmt.Fprintf(tw, "%s\t%.0f\t%.3f\t%.1f%%\t%.1f%%\t%.1f%%\t%d/%d\t\n", r.Preset, r.Effective, r.Ratio,
			100*r.CachedShare, 100*r.VisibleShare, 100*r.RecoverableShare, r.AboveNone, len(t.Runs))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	needles := 0
	if len(t.Rows) > 0 {
		needles = t.Rows[0].Needles
	}
	if _, err := fmt.Fprintf(w, "%d recordings, %d needles; effective = uncached + 0.1 × cached + 4 × output tokens (o200k)\n", len(t.Runs), needles); err != nil {
		return err
	}
	for _, r := range t.Rows {
		if r.Unoffered > 0 {
			if _, err := fmt.Fprintf(w, "%s: %d recorded call(s) went to a tool its selection did not offer (replayed anyway)\n", r.Preset, r.Unoffered); err != nil {
				return err
			}
		}
	}
	return nil
}
