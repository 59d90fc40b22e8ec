package bench

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/canonjson"
	"github.com/agentharness/harness/tokens"
)

// codexCut is Codex CLI's cut of a tool output over 10,000 bytes: a header
// with the original line count, then the head and the tail (half the
// budget each) around "…N tokens truncated…", N estimated as bytes ÷ 4
// the way Codex does. Outputs within the budget are returned as they are.
func codexCut(text string) string {
	const budget = 10_000
	if len(text) <= budget {
		return text
	}
	head, tail := text[:budget/2], text[len(text)-budget/2:]
	head = strings.ToValidUTF8(head, "")
	tail = strings.ToValidUTF8(tail, "")
	removed := len(text) - len(head) - len(tail)
	return fmt.Sprintf("Total output lines: %d\n\n%s…%d tokens truncated…%s", strings.Count(text, "\n")+1, head, removed/4, tail)
}

// sweAgentCut is SWE-agent's cut over 100,000 characters: the head only,
// and a note that suggests head/tail/grep.
func sweAgentCut(text string) string {
	const limit = 100_000
	if harness.Chars(text) <= limit {
		return text
	}
	return headChars(text, limit) + fmt.Sprintf("<response clipped><NOTE>Observations should not exceeded %d characters. %d characters were elided. "+
		"Please try a different command that produces less output or use head/tail/grep/redirect the output to a file. Do not use interactive pagers.</NOTE>",
		limit, harness.Chars(text)-limit)
}

// openHandsCut is OpenHands' truncate_content over 30,000 characters: the
// middle is cut out.
func openHandsCut(text string) string {
	const limit = 30_000
	if harness.Chars(text) <= limit {
		return text
	}
	return headChars(text, limit/2) + "\n[... Observation truncated due to length ...]\n" + tailChars(text, limit/2)
}

// crushShellCut is crush's bash output cut over 30,000 characters: head and
// tail with the number of lines dropped.
func crushShellCut(text string) string {
	const limit = 30_000
	if harness.Chars(text) <= limit {
		return text
	}
	head, tail := headChars(text, limit/2), tailChars(text, limit/2)
	mid := text[len(head) : len(text)-len(tail)]
	return head + fmt.Sprintf("\n\n... [%d lines truncated] ...\n\n", strings.Count(mid, "\n")) + tail
}

// crushViewCut is crush's view tool: 200 lines by default, and a note on
// how to read on.
func crushViewCut(text string) string {
	lines := strings.SplitAfter(text, "\n")
	if len(lines) <= 200 {
		return text
	}
	return strings.Join(lines[:200], "") + "\n(File has more lines. Use 'offset' parameter to read beyond line 200)"
}

// claudeTokenError is Claude Code's answer to an MCP result over 25,000
// tokens: an error instead of the result.
func claudeTokenError(c tokens.Counter, limit int, what string) func(string) string {
	return func(text string) string {
		return fmt.Sprintf("%s (%d tokens) exceeds maximum allowed tokens (%d). Please use pagination, filtering, or limit parameters to reduce the response size.", what, c.Count(text), limit)
	}
}

// tokenRule is a ceiling measured in tokens: a result of a matching tool
// over limit tokens is replaced by cut's text and marked as an error (the
// way Claude Code refuses oversized MCP results).
func tokenRule(c tokens.Counter, by string, tools func(string) bool, limit int, cut func(string) string) harness.Guard {
	return func(next harness.ToolFunc) harness.ToolFunc {
		return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			res, err := next(ctx, call)
			if err != nil || res == nil || !tools(call.Name) || res.Cut() {
				return res, err
			}
			text := res.ModelText()
			if len(text) <= limit || c.Count(text) <= limit {
				return res, nil
			}
			setModel(res, cut(text), harness.Cut{Kind: harness.CutTruncated, By: by})
			res.IsError = true
			return res, nil
		}
	}
}

// readDedupe is Claude Code's stub for a re-read of a file that has not
// changed: a read-only read call with the same arguments as an earlier
// one, with no modifying call in between, returning the same content.
func readDedupe(by string) harness.Guard {
	type key struct{ tool, args string }
	seen := map[key]string{} // → content digest
	var lastConv string
	return func(next harness.ToolFunc) harness.ToolFunc {
		return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			res, err := next(ctx, call)
			if err != nil || res == nil {
				return res, err
			}
			info, _ := harness.CallInfoFrom(ctx)
			if info.Conversation != lastConv {
				seen, lastConv = map[key]string{}, info.Conversation
			}
			if !isRead(call.Name) {
				if !info.Spec.Risk.IsReadOnly() {
					clear(seen)
				}
				return res, nil
			}
			k := key{call.Name, canonjson.OrRaw(call.Args)}
			sum := fmt.Sprintf("%x", sha256.Sum256([]byte(res.FullText())))
			if prev, ok := seen[k]; ok && prev == sum {
				setModel(res, "File unchanged since last read. The content from the earlier Read tool_result in this conversation is still current — refer to that instead of re-reading.",
					harness.Cut{Kind: harness.CutDeduped, By: by})
				return res, nil
			}
			seen[k] = sum
			return res, nil
		}
	}
}

// lastNObservations is SWE-agent's history processor: the newest n tool
// outputs are shown; older ones are replaced by a line saying how many
// lines were omitted. It acts on every request, so the request changes
// near its start every round (each clear breaks the prompt cache).
func lastNObservations(n int) harness.ViewPolicy {
	return harness.ViewPolicyFunc(func(_ context.Context, v *harness.View) error {
		var idx []int
		for i, m := range v.Messages {
			if m.Role == harness.RoleTool {
				idx = append(idx, i)
			}
		}
		for k := 0; k < len(idx)-n; k++ {
			i := idx[k]
			text := v.Messages[i].Text()
			if err := v.ReplaceText(i, fmt.Sprintf("Old environment output: (%d lines omitted)", strings.Count(text, "\n")+1),
				harness.Cut{Kind: harness.CutCleared, By: "swe-agent", BytesIn: len(text)}); err != nil {
				return err
			}
		}
		return nil
	})
}

// observationMasking is OpenHands' ObservationMaskingCondenser: tool
// outputs outside the attention window (the newest window messages) are
// replaced by "<MASKED>".
func observationMasking(window int) harness.ViewPolicy {
	return harness.ViewPolicyFunc(func(_ context.Context, v *harness.View) error {
		for i := 0; i < len(v.Messages)-window; i++ {
			if v.Messages[i].Role != harness.RoleTool {
				continue
			}
			text := v.Messages[i].Text()
			if err := v.ReplaceText(i, "<MASKED>", harness.Cut{Kind: harness.CutCleared, By: "openhands", BytesIn: len(text)}); err != nil {
				return err
			}
		}
		return nil
	})
}

// clearToolUses is Anthropic's clear_tool_uses_20250919 context edit, which
// the API applies to each request as it arrives: when the request's input
// is above trigger tokens, the results of all but the newest keep tool
// uses are replaced by a placeholder — provided that reclaims at least
// clearAtLeast tokens; otherwise nothing is cleared.
func clearToolUses(c tokens.Counter, trigger, keep, clearAtLeast int) harness.ViewPolicy {
	return harness.ViewPolicyFunc(func(_ context.Context, v *harness.View) error {
		req := v.Request(0)
		if tokens.CountRequest(c, req) <= trigger {
			return nil
		}
		var idx []int
		for i, m := range v.Messages {
			if m.Role == harness.RoleTool {
				idx = append(idx, i)
			}
		}
		if len(idx) <= keep {
			return nil
		}
		const placeholder = "[tool result cleared]"
		reclaim := 0
		for _, i := range idx[:len(idx)-keep] {
			reclaim += tokens.CountParts(c, v.Messages[i].Parts) - c.Count(placeholder)
		}
		if reclaim < clearAtLeast {
			return nil
		}
		for _, i := range idx[:len(idx)-keep] {
			text := v.Messages[i].Text()
			if err := v.ReplaceText(i, placeholder, harness.Cut{Kind: harness.CutCleared, By: "anthropic-context-editing", BytesIn: len(text)}); err != nil {
				return err
			}
		}
		return nil
	})
}

// crushStuck is crush's loop detection: when one (tool, input, output)
// triple, hashed, occurs more than maxRepeats times in the turn's last
// window rounds, the tool rounds stop.
func crushStuck(window, maxRepeats int) harness.ViewPolicy {
	return harness.ViewPolicyFunc(func(_ context.Context, v *harness.View) error {
		if v.Final || v.Turn == nil {
			return nil
		}
		rounds := v.Turn.Rounds
		if len(rounds) > window {
			rounds = rounds[len(rounds)-window:]
		}
		counts := map[[32]byte]int{}
		for _, r := range rounds {
			for _, res := range r.Results {
				var args []byte
				for _, c := range r.Assistant.ToolCalls {
					if c.ID == res.CallID {
						args = c.Args
					}
				}
				h := sha256.Sum256([]byte(res.Tool + "\x00" + string(args) + "\x00" + res.FullText()))
				counts[h]++
				if counts[h] > maxRepeats {
					v.Stop, v.StopReason = harness.Stuck, "the same call returned the same output more than 5 times in the last 10 steps"
					return nil
				}
			}
		}
		return nil
	})
}
