package policy

import (
	"fmt"
	"math"
	"strings"

	"github.com/agentharness/harness/internal/clearnote"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/canonjson"
)

// summarySystem instructs the summarizer.
const summarySystem = "You summarise the earlier part of a conversation between a user and an AI assistant that uses tools, " +
	"so that the assistant can continue the conversation without it. Keep what the user asked for and decided, " +
	"what the assistant found out (facts, file names, identifiers, numbers, errors) and what is still open. " +
	"Mention the call ids of tool results that hold important details, since they can be recalled. " +
	"Write plain prose or short bullet points, with no preamble."

// summaryExcerpts are the per-result excerpt lengths (in characters) tried
// when rendering turns for the summarizer, longest first, until the
// rendering fits its budget.
var summaryExcerpts = []int{2000, 500, 120, 0}

// summarize is stage 2: it summarises the turns older than the newest
// keepTurns (with the newest summary, if any, as the starting point),
// records the summary as a note and shows it in place of those turns.
func (c *compaction) summarize(now, goal float64) error {
	v := c.v
	prev, from, upto := c.summaryRange()
	if upto <= from {
		c.emit(fmt.Sprintf("still %.0f tokens after clearing (target %.0f); the newest %d turns are never summarised", now, goal, c.keepTurns),
			map[string]any{"stage": "over", "tokens": roundTokens(now), "target": roundTokens(goal), "window": c.window}, nil)
		return nil
	}
	resp, body, err := c.askSummarizer(prev, from, upto)
	if err != nil || resp == nil {
		return err
	}
	body, cut := c.fitTokens(body, c.summaryTokens)
	text := fmt.Sprintf("Summary of the conversation so far (turns 1–%d; the full transcript is kept, and earlier tool results can be fetched by call id):\n%s", upto, body)

	// The clearing marks stay notes of their own; the summary only stands
	// in for turns.
	note := &harness.Note{After: upto, Text: text, By: compactName}
	v.AddNote(note)
	v.Spent = v.Spent.Add(resp.Usage)

	// Show the view BuildView will build from now on: the note in place
	// of the turns it covers.
	c.dropCovered(upto)
	c.setNoteMessage(text)
	after := c.tokens()
	u := resp.Usage
	c.emit(fmt.Sprintf("summarised turns %d–%d in %d tokens: %.0f → %.0f tokens of a %d-token window", from+1, upto,
		c.counter.Count(body), now, after, c.window),
		map[string]any{"stage": "summary", "tokens_before": roundTokens(now), "tokens_after": roundTokens(after), "window": c.window,
			"after": upto, "summary_tokens": c.counter.Count(body), "summary_cut": cut}, &u)
	return nil
}

// summaryRange returns the conversation's newest summary (nil before the
// first) and the turns (from, upto] a new one would cover: those after it
// and older than the newest keepTurns.
func (c *compaction) summaryRange() (prev *harness.Note, from, upto int) {
	v := c.v
	current := 0
	if v.Turn != nil {
		current = v.Turn.Index
	} else if t := v.Conversation.LastTurn(); t != nil {
		current = t.Index
	}
	prev = v.Conversation.Summary()
	if prev != nil {
		from = prev.After
	}
	return prev, from, current - c.keepTurns
}

// askSummarizer asks the summarizer to summarise turns (from, upto],
// starting from prev, and returns its response and the summary's text. A
// failed or empty answer is a warning event and a nil response: the
// request stays as it is and the turn goes on (on overflow, the provider
// says whether it still fits). Only a cancelled context is an error.
func (c *compaction) askSummarizer(prev *harness.Note, from, upto int) (*harness.Response, string, error) {
	v := c.v
	shown := prev
	if shown == nil && v.Conversation.Clears() {
		// The summariser is told what the view told the model: before any
		// summary, the clearing notice stands where a summary would.
		shown = &harness.Note{Text: clearnote.Text}
	}
	req := &harness.Request{
		System: summarySystem,
		Messages: []harness.Message{
			{Role: harness.RoleSystem, Parts: []harness.Part{harness.TextPart(summarySystem)}},
			{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart(c.renderForSummary(shown, from, upto))}},
		},
		MaxOutputTokens: c.summaryTokens,
		Final:           true,
		Round:           v.Round,
	}
	if v.Turn != nil {
		req.Turn = v.Turn.Index
	}
	resp, err := c.summarizer.Generate(c.ctx, req)
	if err == nil && resp == nil {
		err = fmt.Errorf("the summarizer returned no response")
	}
	if err != nil {
		if c.ctx.Err() != nil {
			return nil, "", fmt.Errorf("compact: summarising turns %d–%d: %w", from+1, upto, err)
		}
		harness.Emit(c.ctx, ofView(v, harness.Event{Kind: harness.EventWarning, Policy: compactName, Round: v.Round,
			Detail: fmt.Sprintf("compact: summarising turns %d–%d failed: %v", from+1, upto, err)}))
		return nil, "", nil
	}
	body := strings.TrimSpace(resp.Message.Text())
	if body == "" {
		harness.Emit(c.ctx, ofView(v, harness.Event{Kind: harness.EventWarning, Policy: compactName, Round: v.Round,
			Detail: fmt.Sprintf("compact: the summary of turns %d–%d was empty; nothing was replaced", from+1, upto)}))
		return nil, "", nil
	}
	return resp, body, nil
}

// dropCovered removes from the view, and from the compaction's counts, the
// messages of the turns up to upto, which a summary now stands in for.
func (c *compaction) dropCovered(upto int) {
	uncovered := func(i int) bool { t := c.v.Origins[i].Turn; return t == 0 || t > upto }
	raw := c.raw[:0]
	for i, n := range c.raw {
		if uncovered(i) {
			raw = append(raw, n)
		}
	}
	c.v.Keep(uncovered)
	c.raw = raw
}

// renderForSummary writes turns (from, upto] as plain text for the
// summarizer, starting from the previous summary. Tool results appear as
// excerpts of the model's copy; the excerpts shrink until the rendering
// fits half the window, and if even bare turns do not fit, the oldest
// text is dropped (the newest matters most to what comes next).
func (c *compaction) renderForSummary(prev *harness.Note, from, upto int) string {
	budget := int(0.5 * float64(c.window) / c.factor)
	var text string
	for _, excerpt := range summaryExcerpts {
		text = c.renderTurns(prev, from, upto, excerpt)
		if c.counter.Count(text) <= budget {
			return text
		}
	}
	// Keep the longest tail that fits.
	b := runeBounds(text)
	lo, hi := 0, len(b)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if c.counter.Count(text[b[mid]:]) <= budget {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return "(the oldest part was left out to fit)\n" + text[b[lo]:]
}

func (c *compaction) renderTurns(prev *harness.Note, from, upto, excerpt int) string {
	var b strings.Builder
	if prev != nil {
		fmt.Fprintf(&b, "Summary of turns 1–%d so far:\n%s\n\n", prev.After, prev.Text)
	}
	fmt.Fprintf(&b, "Summarise the conversation so far, including the turns below (turns %d–%d).\n", from+1, upto)
	for _, t := range c.v.Conversation.Turns {
		if t.Index <= from || t.Index > upto {
			continue
		}
		fmt.Fprintf(&b, "\n## Turn %d\nUser: %s\n", t.Index, t.Input)
		for _, r := range t.Rounds {
			if s := strings.TrimSpace(r.Assistant.Text()); s != "" {
				fmt.Fprintf(&b, "Assistant: %s\n", s)
			}
			for _, tc := range r.Assistant.ToolCalls {
				fmt.Fprintf(&b, "Assistant called %s %s (call id %s)\n", tc.Name, clip(canonjson.OrRaw(tc.Args), 300), tc.ID)
			}
			for _, res := range r.Results {
				status := ""
				if res.IsError {
					status = ", failed"
				}
				// Bytes, not PayloadSize: a result loaded from a store may
				// come without its payload.
				fmt.Fprintf(&b, "Result of %s (%s, %d bytes%s)", res.CallID, res.Tool, res.Bytes, status)
				if excerpt > 0 {
					fmt.Fprintf(&b, ": %s", clip(res.ModelText(), excerpt))
				}
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

// clip cuts s to n characters, marking the cut. Bytes are kept as they
// are (invalid UTF-8 counts one character per byte, as range does).
func clip(s string, n int) string {
	bounds := runeBounds(s)
	if len(bounds)-1 <= n {
		return s
	}
	return s[:bounds[n]] + fmt.Sprintf("… (%d more characters)", len(bounds)-1-n)
}

// runeBounds returns the byte offset of every character of s, and len(s).
func runeBounds(s string) []int {
	b := make([]int, 0, len(s)+1)
	for i := range s {
		b = append(b, i)
	}
	return append(b, len(s))
}

// fitTokens cuts text to at most limit calibrated tokens (keeping the
// head) and reports whether it cut.
func (c *compaction) fitTokens(text string, limit int) (string, bool) {
	scaled := func(s string) int { return int(math.Ceil(float64(c.counter.Count(s)) * c.factor)) }
	if scaled(text) <= limit {
		return text, false
	}
	const mark = " …"
	b := runeBounds(text)
	lo, hi := 0, len(b)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if scaled(text[:b[mid]]+mark) <= limit {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return text[:b[lo]] + mark, true
}
