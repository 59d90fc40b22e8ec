package benchcore

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode"
)

// cutArgsMax bounds the arguments a cut's line shows, in runes.
const cutArgsMax = 48

// writeCuts prints, when the runs' cells list their cuts (Options.Cuts),
// one line per recording, preset and cut (see writeCutLine).
func (t *Table) writeCuts(w io.Writer, price Pricing) error {
	if !t.hasCuts() {
		return nil
	}
	tw := cutsHeader(w, price)
	for _, run := range t.Runs {
		name := run.Recording
		for p, c := range run.Cells {
			for _, cut := range c.Cuts {
				writeCutLine(tw, name, t.Rows[p].Preset, cut, price)
				name = ""
			}
		}
	}
	return tw.Flush()
}

// cutsHeader prints the title and the columns of a table of cuts, and
// returns the writer of its lines.
func cutsHeader(w io.Writer, price Pricing) *tabwriter.Writer {
	fmt.Fprintf(w, "\ncuts: what hiding each result saved and what reading it back cost (%s; each request's saving shared by the results it shows cut, by the characters each hides)\n", price.Name)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "recording\tpreset\trequest\tcall\ttool\targuments\tcut\tfull\tshown\tsaved\tre-reads\tre-read cost\tnet\t\n")
	return tw
}

// writeCutLine prints one cut: the request that first showed it cut, the
// call, how it was cut, its characters whole and shown, what hiding it
// saved and what reading it back cost under price, and the difference.
func writeCutLine(tw io.Writer, recording, preset string, cut Cut, price Pricing) {
	how := cut.Arrival
	if cut.Cleared > 0 {
		how += fmt.Sprintf(", cleared at %d", cut.Cleared)
	}
	saved, reread := cut.Saved[price.Name], cut.RereadCost[price.Name]
	fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t\n", recording, preset, cut.Request,
		oneLine(cut.Call, 24), cut.Tool, oneLine(cut.Args, cutArgsMax), how, thousands(cut.FullChars), thousands(cut.ShownChars),
		signed(saved), cut.Rereads, signed(reread), signed(saved-reread))
}

// hasCuts reports whether any run's cell lists cuts.
func (t *Table) hasCuts() bool {
	for _, run := range t.Runs {
		for _, c := range run.Cells {
			if len(c.Cuts) > 0 {
				return true
			}
		}
	}
	return false
}

// oneLine is s on one line, control characters and tabs as spaces, cut
// to max runes by an "…" a third of the way in: a call's arguments keep
// their start and the end of a path.
func oneLine(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	head := max / 3
	return string(r[:head]) + "…" + string(r[len(r)-(max-head-1):])
}
