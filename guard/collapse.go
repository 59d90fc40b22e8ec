package guard

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/locator"
	"github.com/agentharness/harness/spill"
)

// Defaults of [Collapse].
const (
	// defaultCollapseMinLines is the shortest block of repeated lines that
	// is collapsed: shorter repeats (a shared import block, a common
	// signature) cost less than the pointer's interruption.
	defaultCollapseMinLines = 8
	// defaultCollapseMaxBytes bounds the outputs the guard reads: larger
	// ones are left to the ceiling (ResultPolicy), which spills them.
	defaultCollapseMaxBytes = 256 << 10
	// collapseKeyChars: a line starts a block only when it holds at least
	// this many non-blank characters; blank lines and braces repeat
	// everywhere and would anchor matches on noise.
	collapseKeyChars = 8
	// collapseOccurrences bounds the earlier places of one line the guard
	// tries to extend a block from, which bounds its work on outputs made
	// of one line repeated.
	collapseOccurrences = 4
)

// CollapseName names the guard in cuts and events.
const CollapseName = "collapse"

// Collapse is a per-call guard ([Collapse.Guard]) that decides, when a
// result arrives, to show once what the model was already shown: a block
// of at least MinLines consecutive lines identical to consecutive lines of
// an earlier result the model still sees whole becomes one marker line,
// for example
//
//	[collapsed: lines 12-31 of this output (20 lines, 1480 chars) are lines 40-59 of the output of call call_7 shown earlier; recall call call_9 for this output in full]
//
// It serves agents that re-read a file in overlapping ranges and re-run
// commands whose output barely changes. The model copy is decided once, at
// arrival, so requests stay append-only and cached; a block is collapsed
// only when the marker is shorter than the lines it replaces. The stored
// result is never changed: the cut (kind deduped, By "collapse", Of the
// first earlier call referred to) says where to get it back.
//
// A source's lines are counted in the text the model was shown of it.
// Earlier calls of the same round are sources too, in call order: a call
// that could collapse waits for them (harness.CallInfo.RoundResults) until
// its context ends or shortly before its deadline, then decides from those
// that completed. Only text results of at most MaxBytes that no inner
// guard cut are considered. Use it inside the ceiling (after ResultPolicy
// in Options.Guards) so a re-read that collapses needs no spill. The zero
// value and a nil *Collapse mean the defaults. It keeps no state, so a
// conversation reloaded from a store collapses as the live one did.
type Collapse struct {
	// MinLines is the shortest block collapsed (default 8).
	MinLines int
	// MaxBytes bounds the size of the results the guard reads, and of the
	// earlier results it compares them with (default 256 KiB).
	MaxBytes int
	// Tools, when not empty, limits the guard to the tools named.
	Tools []string
	// Spill, when set, receives the whole output of a collapsed result,
	// and the markers name that file and the store's hint instead of the
	// recall tool: for agents that have none, such as a client behind
	// the proxy.
	Spill spill.Store
}

// Guard returns the guard.
func (c *Collapse) Guard() harness.Guard {
	var cfg Collapse
	if c != nil {
		cfg = *c
	}
	if cfg.MinLines <= 0 {
		cfg.MinLines = defaultCollapseMinLines
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = defaultCollapseMaxBytes
	}
	return func(next harness.ToolFunc) harness.ToolFunc {
		return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			res, err := next(ctx, call)
			if err != nil || res == nil || res.Stream != nil || len(res.Cuts) > 0 || !cfg.applies(call.Name) {
				return res, err
			}
			info, ok := harness.CallInfoFrom(ctx)
			if !ok {
				return res, nil
			}
			text, ok := textOnly(res.ModelParts())
			if !ok || len(text) > cfg.MaxBytes || strings.Count(text, "\n")+1 < cfg.MinLines {
				return res, nil
			}
			sources := collapseSources(ctx, info, call, cfg.MaxBytes)
			whole := "recall call " + markerSafe(call.ID, 80) + " for this output in full"
			out, blocks := collapseText(text, sources, whole, cfg.MinLines)
			loc := locator.Call(call.ID)
			if page := spillPagePath(res, info); len(blocks) > 0 && cfg.Spill != nil && page != "" {
				// A page of a spill file: that file holds it whole.
				loc, whole = page, "this output in full: "+markerSafe(page, 200)
				out, blocks = collapseText(text, sources, whole, cfg.MinLines)
			} else if len(blocks) > 0 && cfg.Spill != nil {
				saved, err := cfg.Spill.Save(ctx, spill.Entry{Conversation: info.Conversation, CallID: call.ID, Tool: call.Name, Ext: "txt"}, strings.NewReader(text))
				if err != nil {
					return res, nil // shown whole: nothing names a file that is not there
				}
				loc, whole = saved.Locator, "this output in full: "+markerSafe(saved.Locator, 200)
				if saved.Hint != "" {
					whole += "; " + strings.TrimSuffix(saved.Hint, ".")
				}
				out, blocks = collapseText(text, sources, whole, cfg.MinLines)
			}
			if len(blocks) > 0 {
				applyCollapse(ctx, call, res, text, out, blocks, loc)
			}
			return res, nil
		}
	}
}

// applyCollapse makes out, text with blocks collapsed, res's model copy,
// and records and reports the cut.
func applyCollapse(ctx context.Context, call *harness.ToolCall, res *harness.ToolResult, text, out string, blocks []collapsedBlock, loc string) {
	cut := harness.Cut{Kind: harness.CutDeduped, By: CollapseName, BytesIn: len(text), BytesOut: len(out),
		Locator: loc, Of: blocks[0].src, Refs: blockSources(blocks)}
	res.Model = []harness.Part{harness.TextPart(out)}
	res.Cuts = append(res.Cuts, cut)
	lines := 0
	for _, b := range blocks {
		lines += b.n
	}
	c := *call
	harness.Emit(ctx, harness.Event{Kind: harness.EventPolicy, Policy: CollapseName, Call: &c,
		Detail: fmt.Sprintf("%s: %d repeated line(s) in %d block(s) collapsed: %d → %d bytes", call.Name, lines, len(blocks), len(text), len(out)),
		Data:   map[string]any{"blocks": len(blocks), "lines": lines, "bytes_in": len(text), "bytes_shown": len(out), "of": blocks[0].src}})
}

// blockSources lists the calls blocks point at, each once, in order.
func blockSources(blocks []collapsedBlock) []string {
	var ids []string
	for _, b := range blocks {
		if !slices.Contains(ids, b.src) {
			ids = append(ids, b.src)
		}
	}
	return ids
}

func (c *Collapse) applies(tool string) bool {
	if len(c.Tools) == 0 {
		return true
	}
	for _, t := range c.Tools {
		if t == tool {
			return true
		}
	}
	return false
}

// textOnly joins parts that are all text, as the model reads them.
func textOnly(parts []harness.Part) (string, bool) {
	for _, p := range parts {
		if p.Type != harness.PartText {
			return "", false
		}
	}
	return harness.Message{Parts: parts}.Text(), true
}

// collapseSource is an earlier result the model still sees: its call id
// and the lines it was shown.
type collapseSource struct {
	id    string
	lines []string
}

// collapseSources lists the results made before call that the model still
// sees whole, oldest first: the transcript's, then those of the calls
// before call in its own round, waited for when they run beside it
// (resultsBefore), so call order, not finish order, decides.
func collapseSources(ctx context.Context, info harness.CallInfo, call *harness.ToolCall, maxBytes int) []collapseSource {
	var out []collapseSource
	for _, e := range resultsBefore(ctx, info, call, true) {
		if !e.shown(info) {
			continue
		}
		text, ok := textOnly(e.res.ModelParts())
		if !ok || len(text) > maxBytes {
			continue
		}
		out = append(out, collapseSource{id: e.res.CallID, lines: strings.Split(text, "\n")})
	}
	return out
}

// collapsedBlock is one block of a result replaced by a marker: n lines
// from line at (0-based) repeat lines from srcAt of source src.
type collapsedBlock struct {
	at, n int
	src   string
	srcAt int
}

// collapseText replaces, in text, every block of at least minLines lines
// that repeats consecutive lines of a source by a marker. Blocks are found
// greedily from the top: at each line that can anchor a match, the
// longest match among the line's first occurrences in the sources wins.
func collapseText(text string, sources []collapseSource, whole string, minLines int) (string, []collapsedBlock) {
	type loc struct{ src, line int }
	index := map[string][]loc{}
	for s, src := range sources {
		for i, l := range src.lines {
			if !anchorLine(l) {
				continue
			}
			if locs := index[l]; len(locs) < collapseOccurrences {
				index[l] = append(locs, loc{s, i})
			}
		}
	}
	if len(index) == 0 {
		return text, nil
	}
	lines := strings.Split(text, "\n")
	var (
		b      strings.Builder
		blocks []collapsedBlock
	)
	b.Grow(len(text))
	first := true
	emit := func(s string) {
		if !first {
			b.WriteByte('\n')
		}
		b.WriteString(s)
		first = false
	}
	for i := 0; i < len(lines); {
		best, bestN := loc{}, 0
		if anchorLine(lines[i]) {
			for _, l := range index[lines[i]] {
				src := sources[l.src].lines
				n := 0
				for i+n < len(lines) && l.line+n < len(src) && lines[i+n] == src[l.line+n] {
					n++
				}
				if n > bestN {
					best, bestN = l, n
				}
			}
		}
		if bestN >= minLines {
			blk := collapsedBlock{at: i, n: bestN, src: sources[best.src].id, srcAt: best.line}
			size, chars := 0, 0
			for _, l := range lines[i : i+bestN] {
				size += len(l) + 1
				chars += utf8.RuneCountInString(l) + 1
			}
			marker := collapseMarker(blk, chars, whole)
			if len(marker) < size {
				emit(marker)
				blocks = append(blocks, blk)
				i += bestN
				continue
			}
		}
		emit(lines[i])
		i++
	}
	if len(blocks) == 0 {
		return text, nil
	}
	return b.String(), blocks
}

// anchorLine reports whether a line can start a match.
func anchorLine(l string) bool {
	return len(strings.TrimSpace(l)) >= collapseKeyChars
}

// collapseMarker is the line that stands for a block; chars counts the
// characters of the lines it replaces, line breaks included, and whole
// says where the output is in full.
func collapseMarker(b collapsedBlock, chars int, whole string) string {
	return "[collapsed: lines " + strconv.Itoa(b.at+1) + "-" + strconv.Itoa(b.at+b.n) + " of this output (" + strconv.Itoa(b.n) + " lines, " +
		strconv.Itoa(chars) + " chars) are lines " + strconv.Itoa(b.srcAt+1) + "-" + strconv.Itoa(b.srcAt+b.n) +
		" of the output of call " + markerSafe(b.src, 80) + " shown earlier; " + whole + "]"
}
