package bench

import (
	"fmt"
	"html"
	"io"
	"sort"
	"strings"
)

// palette colours the series of the charts.
var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"}

// WriteAuditHTML writes one self-contained page (no scripts, no external
// resources): per recording, the tables of the text report and two inline
// SVG charts — evidence per round stacked by tool, and cumulative input
// tokens per preset. The markup is well-formed XML as well as HTML.
func WriteAuditHTML(w io.Writer, audits []Audit) error {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"/><title>harness audit</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}th{background:#f3f3f3}td.l,th.l{text-align:left}svg{display:block;margin:.5em 0}.legend span{display:inline-block;margin-right:1em}.sw{display:inline-block;width:10px;height:10px;margin-right:4px}</style>
</head><body>
<h1>harness audit</h1>
`)
	for i, a := range audits {
		fmt.Fprintf(&b, "<section id=\"rec-%d\"><h2>%s</h2>\n<p>%s · %s · %d model calls · recorded %d input tokens (%d cached), %d output</p>\n",
			i, esc(a.Recording), esc(a.Source), esc(a.Format), a.Calls, a.Recorded.Input, a.Recorded.Cached, a.Recorded.Output)
		b.WriteString("<h3>What each preset would have cost</h3>\n<table><tr><th class=\"l\">preset</th><th>effective tokens</th><th>× none</th><th>cached</th><th>visible</th><th>recoverable</th><th>tool schemas sent</th></tr>\n")
		for k, p := range a.Presets {
			c := a.Costs[k]
			fmt.Fprintf(&b, "<tr><td class=\"l\">%s</td><td>%.0f</td><td>%.3f</td><td>%.1f%%</td><td>%d/%d</td><td>%d/%d</td><td>%d</td></tr>\n", esc(p), c.Effective, c.Ratio, 100*c.CachedShare, c.Visible, c.Needles, c.Recoverable, c.Needles, c.ToolSchemas)
		}
		b.WriteString("</table>\n<h3>Evidence per round, by tool</h3>\n")
		evidenceChart(&b, a)
		b.WriteString("<h3>Cumulative input tokens per preset</h3>\n")
		cumulativeChart(&b, a)
		b.WriteString("<h3>Largest results</h3>\n<table><tr><th>chars</th><th class=\"l\">tool</th><th class=\"l\">arguments</th><th>call</th></tr>\n")
		for _, r := range a.Largest {
			fmt.Fprintf(&b, "<tr><td>%d</td><td class=\"l\">%s</td><td class=\"l\">%s</td><td>%d</td></tr>\n", r.Chars, esc(r.Tool), esc(clip(r.Args, 120)), r.Call)
		}
		fmt.Fprintf(&b, "</table>\n<p>Repeated reads: %d exact, %d overlapping line ranges of one file.</p>\n</section>\n", len(a.ExactRepeats), len(a.OverlappingReads))
	}
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func esc(s string) string { return html.EscapeString(s) }

const chartW, chartH, padL, padB = 760, 220, 70, 24

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
	fmt.Fprintf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"evidence characters per model call, stacked by tool\">\n", chartW, chartH)
	axes(b, peak, "chars")
	bw := float64(chartW-padL-10) / float64(max(len(rounds), 1))
	for i, r := range rounds {
		y := float64(chartH - padB)
		for k, t := range tools {
			h := float64(r[t]) / float64(peak) * float64(chartH-padB-10)
			if h <= 0 {
				continue
			}
			y -= h
			fmt.Fprintf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>call %d: %s %d chars</title></rect>\n",
				float64(padL)+float64(i)*bw, y, max(bw-1, 0.5), h, palette[k%len(palette)], i+1, esc(t), r[t])
		}
	}
	b.WriteString("</svg>\n")
	legend(b, tools)
}

// cumulativeChart draws one line per preset: input tokens summed over the
// model calls so far.
func cumulativeChart(b *strings.Builder, a Audit) {
	peak, n := 1, 1
	for _, c := range a.Cumulative {
		if len(c) > 0 {
			peak = max(peak, c[len(c)-1])
		}
		n = max(n, len(c))
	}
	fmt.Fprintf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"cumulative input tokens per preset\">\n", chartW, chartH)
	axes(b, peak, "tokens")
	for k, c := range a.Cumulative {
		var pts []string
		for i, v := range c {
			x := float64(padL) + float64(i)/float64(max(n-1, 1))*float64(chartW-padL-10)
			y := float64(chartH-padB) - float64(v)/float64(peak)*float64(chartH-padB-10)
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
		}
		fmt.Fprintf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"%s\"><title>%s</title></polyline>\n", palette[k%len(palette)], strings.Join(pts, " "), esc(a.Presets[k]))
	}
	b.WriteString("</svg>\n")
	legend(b, a.Presets)
}

func axes(b *strings.Builder, peak int, unit string) {
	fmt.Fprintf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>\n", padL, chartH-padB, chartW-10, chartH-padB)
	fmt.Fprintf(b, "<line x1=\"%d\" y1=\"10\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>\n", padL, padL, chartH-padB)
	fmt.Fprintf(b, "<text x=\"%d\" y=\"16\" font-size=\"11\" text-anchor=\"end\">%d</text>\n", padL-4, peak)
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">0 %s</text>\n", padL-4, chartH-padB, unit)
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" font-size=\"11\">model calls →</text>\n", padL, chartH-6)
}

func legend(b *strings.Builder, names []string) {
	b.WriteString("<p class=\"legend\">")
	for k, n := range names {
		fmt.Fprintf(b, "<span><span class=\"sw\" style=\"background:%s\"></span>%s</span>", palette[k%len(palette)], esc(n))
	}
	b.WriteString("</p>\n")
}
