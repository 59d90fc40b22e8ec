package benchcore

import (
	"fmt"
	"github.com/agentharness/harness/internal/numfmt"
	"html"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// palette colours the series of the charts (Tableau 10, then darker
// shades); series beyond it repeat a colour with a dashed line.
var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
	"#1f3b5c", "#a3531a", "#2d6a2a", "#7a3b6e", "#3d7d78"}

// dashes are the stroke patterns of series whose colour repeats.
var dashes = []string{"", "6 3", "2 3", "8 3 2 3"}

// auditScript is the page's only script, inline: a click on a legend entry
// of the cumulative chart hides or shows its line. It records any script
// error on <body data-errors> and sets <body data-ready="1"> once it has
// run, so a headless browser can tell that it ran cleanly. It is written
// without '<' and '&' so that the page stays well-formed XML.
const auditScript = `(function () {
  var errors = [];
  window.addEventListener("error", function (e) {
    errors.push(String(e.message));
    document.body.setAttribute("data-errors", errors.join(" | "));
  });
  document.querySelectorAll("[data-series]").forEach(function (item) {
    item.addEventListener("click", function () {
      var id = item.getAttribute("data-series");
      var off = item.classList.toggle("off");
      document.querySelectorAll("[data-line='" + id + "']").forEach(function (line) {
        line.style.display = off ? "none" : "";
      });
    });
  });
  document.body.setAttribute("data-ready", "1");
})();`

// WriteAuditHTML writes one self-contained page (no external resources;
// one small inline script): per recording, the tables of the text report
// and two inline SVG charts — evidence per model call stacked by tool, and
// cumulative input tokens per preset, presets with identical figures drawn
// as one line. The markup is well-formed XML as well as HTML.
func WriteAuditHTML(w io.Writer, audits []Audit) error {
	return writeAuditHTML(w, audits, nil, "")
}

// WriteHTML writes the page WriteAuditHTML writes, headed by the presets'
// figures over every recording (Total): the table harness bench prints,
// each price model of Total.Pricings side by side.
func (r *AuditReport) WriteHTML(w io.Writer) error {
	var head string
	if h, ok := r.Headline(r.Prices); ok {
		var b strings.Builder
		if err := h.WriteText(&b); err != nil {
			return err
		}
		head = b.String()
	}
	return writeAuditHTML(w, r.Audits, r.Total, head)
}

// writeAuditHTML writes the page, opening with the headline's lines
// when head is set, with the total first when there is one.
func writeAuditHTML(w io.Writer, audits []Audit, total *Table, head string) error {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"/><title>harness audit</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em auto;max-width:980px;padding:0 1em;color:#222}
h2{border-top:2px solid #ddd;padding-top:.8em;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right;font-variant-numeric:tabular-nums}
th{background:#f3f3f3}td.l,th.l{text-align:left}td.code{font-family:ui-monospace,monospace;font-size:12px}
tr.best td{background:#eef6ee}
svg{display:block;margin:.5em 0;overflow:visible}svg text{font:11px system-ui,sans-serif;fill:#444}
.legend{display:flex;flex-wrap:wrap;gap:.3em 1.2em;margin:.3em 0 1em}.legend span.item{max-width:100%}
.legend [data-series]{cursor:pointer;user-select:none}.legend .off{opacity:.35;text-decoration:line-through}
.sw{display:inline-block;width:18px;height:0;border-top:3px solid;margin-right:5px;vertical-align:middle}
.box{display:inline-block;width:11px;height:11px;margin-right:5px;vertical-align:-1px}
.note{color:#666;font-size:13px}nav ul{columns:2}
</style>
</head><body>
<h1>harness audit</h1>
`)
	for _, line := range strings.Split(strings.TrimSpace(head), "\n") {
		if line != "" {
			fmt.Fprintf(&b, "<p class=\"headline\">%s</p>\n", html.EscapeString(line))
		}
	}
	fmt.Fprintf(&b, "<p class=\"note\">%d recording(s). Effective tokens = uncached input + 0.1 × cached input + 4 × output (o200k). Visible: evidence the agent used still shown in the request that used it; recoverable adds what a spill file or the transcript store still held.</p>\n", len(audits))
	if total != nil {
		totalSection(&b, total, audits)
	}
	if len(audits) > 1 {
		b.WriteString("<nav><ul>\n")
		for i, a := range audits {
			fmt.Fprintf(&b, "<li><a href=\"#rec-%d\">%s</a> (%s model calls)</li>\n", i, esc(a.Recording), num(a.Calls))
		}
		b.WriteString("</ul></nav>\n")
	}
	for i, a := range audits {
		auditSection(&b, i, a)
	}
	b.WriteString("<script>" + auditScript + "</script>\n</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// totalSection is the table of every preset's figures over all the
// recordings: what each would have cost the whole history.
func totalSection(b *strings.Builder, t *Table, audits []Audit) {
	ps := t.shown()
	fmt.Fprintf(b, "<section id=\"total\"><h2>In total: %s recordings, %s model calls</h2>\n<table><tr><th class=\"l\">preset</th><th class=\"l\">kind</th><th>effective tokens</th>",
		num(len(t.Runs)), num(auditCalls(audits)))
	for _, pr := range ps {
		fmt.Fprintf(b, "<th>× none %s</th>", esc(pr.Name))
	}
	for _, pr := range ps {
		fmt.Fprintf(b, "<th>removed %s</th>", esc(pr.Name))
	}
	b.WriteString("<th>visible</th><th>recoverable</th><th>&gt; 1.01×</th><th>worst</th></tr>\n")
	for _, r := range t.Rows {
		fmt.Fprintf(b, "<tr><td class=\"l\">%s</td><td class=\"l\">%s</td><td>%s</td>", esc(r.Preset), esc(r.Kind), num(int(math.Round(r.Effective))))
		for _, pr := range ps {
			fmt.Fprintf(b, "<td>%.3f</td>", r.Ratios[pr.Name])
		}
		for _, pr := range ps {
			if v, ok := r.Removed[pr.Name]; ok {
				fmt.Fprintf(b, "<td>%.1f%%</td>", 100*v)
			} else {
				b.WriteString("<td>–</td>")
			}
		}
		fmt.Fprintf(b, "<td>%.1f%%</td><td>%.1f%%</td><td>%s/%s</td><td>%.3f</td></tr>\n",
			100*r.VisibleShare, 100*r.RecoverableShare, num(r.AboveTolerance), num(len(t.Runs)), r.Worst)
	}
	b.WriteString("</table>\n<p class=\"note\">The prompt " + esc(t.CacheNote()) + ". Removed: the share of the removable cost (none − floor, every result empty) each preset removes. &gt; 1.01×: recordings costing more than 1.01 × none under any price model; worst: the worst such ratio.</p>\n</section>\n")
}

func auditSection(b *strings.Builder, i int, a Audit) {
	fmt.Fprintf(b, "<section id=\"rec-%d\"><h2>%s</h2>\n<p>%s · %s · %s model calls · recorded %s input tokens (%s cached), %s output</p>\n",
		i, esc(a.Recording), esc(a.Source), esc(a.Format), num(a.Calls), num(a.Recorded.Input), num(a.Recorded.Cached), num(a.Recorded.Output))

	b.WriteString("<h3>What each preset would have cost</h3>\n<table><tr><th class=\"l\">preset</th><th class=\"l\">kind</th><th>effective tokens</th><th>× none</th><th>cached</th><th>visible</th><th>recoverable</th><th>tool schemas sent</th></tr>\n")
	best := -1
	for k, c := range a.Costs {
		if !candidate(a.Presets[k]) {
			continue // an ablation or an idea is a measurement, not a pick
		}
		if c.Needles == 0 || c.Visible == c.Needles {
			if best < 0 || c.Effective < a.Costs[best].Effective {
				best = k
			}
		}
	}
	for k, p := range a.Presets {
		c := a.Costs[k]
		cls := ""
		if k == best {
			cls = " class=\"best\""
		}
		fmt.Fprintf(b, "<tr%s><td class=\"l\">%s</td><td class=\"l\">%s</td><td>%s</td><td>%.3f</td><td>%.1f%%</td><td>%s/%s</td><td>%s/%s</td><td>%s</td></tr>\n",
			cls, esc(p), esc(Kind(p)), num(int(math.Round(c.Effective))), c.Ratio, 100*c.CachedShare, num(c.Visible), num(c.Needles), num(c.Recoverable), num(c.Needles), num(c.ToolSchemas))
	}
	b.WriteString("</table>\n")
	if best >= 0 {
		fmt.Fprintf(b, "<p class=\"note\">Highlighted: the cheapest policy — ours or another system's; ablations and ideas are measurements, not candidates — that kept every needle visible (%s).</p>\n", esc(a.Presets[best]))
	}

	b.WriteString("<h3>Evidence per model call, by tool (everything shown)</h3>\n")
	evidenceChart(b, a)
	b.WriteString("<h3>Cumulative cost per preset (effective tokens: uncached + 0.1 × cached + 4 × output)</h3>\n")
	cumulativeChart(b, i, a)

	b.WriteString("<h3>Turns</h3>\n<table><tr><th>turn</th><th>requests</th><th>evidence chars</th><th>peak request</th><th>tool schemas sent</th><th>schema bytes</th></tr>\n")
	for _, t := range a.Turns {
		fmt.Fprintf(b, "<tr><td>%d</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			t.Index, len(t.Rounds), num(t.EvidenceChars), num(t.PeakEvidenceChars), num(t.ToolSchemas), num(t.ToolSchemaBytes))
	}
	b.WriteString("</table>\n<h3>Largest results</h3>\n<table><tr><th>chars</th><th class=\"l\">tool</th><th class=\"l\">arguments</th><th>model call</th></tr>\n")
	for _, r := range a.Largest {
		fmt.Fprintf(b, "<tr><td>%s</td><td class=\"l\">%s</td><td class=\"l code\">%s</td><td>%s</td></tr>\n", num(r.Chars), esc(r.Tool), esc(clip(r.Args, 110)), num(r.Call))
	}
	fmt.Fprintf(b, "</table>\n<h3>Repeated reads</h3>\n<p>%d exact repeats of an earlier call, %d reads overlapping the line range of an earlier read of the same file.</p>\n",
		len(a.ExactRepeats), len(a.OverlappingReads))
	reps := append(append([]Repeat(nil), a.ExactRepeats...), a.OverlappingReads...)
	if len(reps) > 0 {
		b.WriteString("<table><tr><th>model call</th><th>repeats model call</th><th class=\"l\">call id</th><th class=\"l\">repeats</th><th class=\"l\">what</th><th>chars</th></tr>\n")
		for k, r := range reps[:min(len(reps), 12)] {
			what := "same tool and arguments"
			if k >= len(a.ExactRepeats) {
				what = r.Path + ", " + r.Overlap
			}
			fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td class=\"l code\">%s</td><td class=\"l code\">%s</td><td class=\"l\">%s</td><td>%s</td></tr>\n",
				num(r.Call), num(r.OfCall), esc(r.CallID), esc(r.Of), esc(clip(what, 90)), num(r.Chars))
		}
		b.WriteString("</table>\n")
		if len(reps) > 12 {
			fmt.Fprintf(b, "<p class=\"note\">… and %d more (see --json).</p>\n", len(reps)-12)
		}
	}
	b.WriteString("</section>\n")
}

func esc(s string) string { return html.EscapeString(s) }

// short formats an axis value: 950, 12k, 1.5M.
func short(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// niceStep is a round step (1, 2 or 5 × 10^k) that cuts 0..peak into at
// most about n intervals.
func niceStep(peak float64, n int) float64 {
	if peak <= 0 {
		return 1
	}
	raw := peak / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// The charts' geometry: plot area from (padL, padT) to (chartW-padR,
// chartH-padB).
const chartW, chartH, padL, padR, padT, padB = 900, 250, 64, 16, 26, 34

// frame draws the grid, the y labels (unit after the top one), the x ticks
// for n model calls and the axis titles; it returns the y scale's top.
func frame(b *strings.Builder, peak float64, n int, unit string) float64 {
	step := niceStep(peak, 5)
	top := math.Ceil(peak/step) * step
	if top <= 0 {
		top = step
	}
	ph := float64(chartH - padT - padB)
	for v := 0.0; v <= top+step/2; v += step {
		y := float64(chartH-padB) - v/top*ph
		stroke := "#e4e4e4"
		if v == 0 {
			stroke = "#888" // the x axis
		}
		fmt.Fprintf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>\n", padL, y, chartW-padR, y, stroke)
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", padL-6, y+4, short(v))
	}
	fmt.Fprintf(b, "<text x=\"%d\" y=\"10\" text-anchor=\"end\">%s</text>\n", padL-6, esc(unit))
	xstep := int(niceStep(float64(n), 10))
	for k := 1; k <= n; k++ {
		if k != 1 && k%max(xstep, 1) != 0 && k != n {
			continue
		}
		if k != n && n-k < xstep/2 && k != 1 {
			continue // keep the last label clear of its neighbour
		}
		x := xAt(k, n)
		fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#888\"/>\n", x, chartH-padB, x, chartH-padB+4)
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>\n", x, chartH-padB+16, k)
	}
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">model call</text>\n", chartW-padR, chartH-2)
	return top
}

// xAt is the x of the centre of model call k (from 1) of n.
func xAt(k, n int) float64 {
	w := float64(chartW-padL-padR) / float64(max(n, 1))
	return float64(padL) + (float64(k)-0.5)*w
}

// evidenceChart draws one bar per model call, stacked by tool.
func evidenceChart(b *strings.Builder, a Audit) {
	var rounds []map[string]int
	for _, t := range a.Turns {
		rounds = append(rounds, t.Rounds...)
	}
	toolSet := map[string]bool{}
	peak := 1
	for _, r := range rounds {
		sum := 0
		for t, n := range r {
			toolSet[t] = true
			sum += n
		}
		peak = max(peak, sum)
	}
	var tools []string
	for t := range toolSet {
		tools = append(tools, t)
	}
	sort.Strings(tools)
	fmt.Fprintf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"evidence characters per model call, stacked by tool\">\n", chartW, chartH, chartW, chartH)
	top := frame(b, float64(peak), len(rounds), "chars")
	bw := float64(chartW-padL-padR) / float64(max(len(rounds), 1))
	ph := float64(chartH - padT - padB)
	for i, r := range rounds {
		y := float64(chartH - padB)
		for k, t := range tools {
			h := float64(r[t]) / top * ph
			if h <= 0 {
				continue
			}
			y -= h
			fmt.Fprintf(b, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>model call %d: %s, %s chars</title></rect>\n",
				float64(padL)+float64(i)*bw+min(1, bw/8), y, max(bw-2*min(1, bw/8), 0.5), h, palette[k%len(palette)], i+1, esc(t), num(r[t]))
		}
	}
	b.WriteString("</svg>\n<p class=\"legend\">")
	for k, t := range tools {
		fmt.Fprintf(b, "<span class=\"item\"><span class=\"box\" style=\"background:%s\"></span>%s</span>", palette[k%len(palette)], esc(t))
	}
	b.WriteString("</p>\n")
}

// series is one line of the cumulative chart: presets whose figures are
// identical call after call share it.
type series struct {
	names []string
	cum   []int
}

// cumulativeChart draws one line per distinct series: effective tokens
// (the cost, not the raw input) summed over the model calls so far.
func cumulativeChart(b *strings.Builder, rec int, a Audit) {
	var groups []*series
	for k, c := range a.CumulativeCost {
		found := false
		for _, g := range groups {
			if equalInts(g.cum, c) {
				g.names = append(g.names, a.Presets[k])
				found = true
				break
			}
		}
		if !found {
			groups = append(groups, &series{names: []string{a.Presets[k]}, cum: c})
		}
	}
	peak, n := 1, 1
	for _, g := range groups {
		if len(g.cum) > 0 {
			peak = max(peak, g.cum[len(g.cum)-1])
		}
		n = max(n, len(g.cum))
	}
	fmt.Fprintf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"cumulative effective tokens per preset\">\n", chartW, chartH, chartW, chartH)
	top := frame(b, float64(peak), n, "effective tokens")
	ph := float64(chartH - padT - padB)
	for k, g := range groups {
		var pts []string
		for i, v := range g.cum {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", xAt(i+1, n), float64(chartH-padB)-float64(v)/top*ph))
		}
		dash := ""
		if d := dashes[(k/len(palette))%len(dashes)]; d != "" {
			dash = fmt.Sprintf(" stroke-dasharray=\"%s\"", d)
		}
		fmt.Fprintf(b, "<polyline data-line=\"r%d-s%d\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"%s\"><title>%s</title></polyline>\n",
			rec, k, palette[k%len(palette)], dash, strings.Join(pts, " "), esc(strings.Join(g.names, ", ")))
	}
	b.WriteString("</svg>\n<p class=\"legend\">")
	for k, g := range groups {
		last := 0
		if len(g.cum) > 0 {
			last = g.cum[len(g.cum)-1]
		}
		style := "border-color:" + palette[k%len(palette)]
		if dashes[(k/len(palette))%len(dashes)] != "" {
			style += ";border-top-style:dashed"
		}
		fmt.Fprintf(b, "<span class=\"item\" data-series=\"r%d-s%d\" title=\"click to hide or show\"><span class=\"sw\" style=\"%s\"></span>%s — %s</span>",
			rec, k, style, esc(strings.Join(g.names, " = ")), num(last))
	}
	b.WriteString("</p>\n")
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// num formats n with thousands separators.
func num(n int) string { return numfmt.Thousands(int64(n)) }
