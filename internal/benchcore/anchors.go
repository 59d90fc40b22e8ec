package benchcore

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/internal/canonjson"
	"github.com/agentharness/harness/internal/replayengine"
	"github.com/agentharness/harness/policy"
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
	if utf8.RuneCountInString(text) <= limit {
		return text
	}
	return headChars(text, limit) + fmt.Sprintf("<response clipped><NOTE>Observations should not exceeded %d characters. %d characters were elided. "+
		"Please try a different command that produces less output or use head/tail/grep/redirect the output to a file. Do not use interactive pagers.</NOTE>",
		limit, utf8.RuneCountInString(text)-limit)
}

// openHandsCut is OpenHands' truncate_content over 30,000 characters: the
// middle is cut out.
func openHandsCut(text string) string {
	const limit = 30_000
	if utf8.RuneCountInString(text) <= limit {
		return text
	}
	return headChars(text, limit/2) + "\n[... Observation truncated due to length ...]\n" + tailChars(text, limit/2)
}

// crushShellCut is crush's bash output cut over 30,000 characters: head and
// tail with the number of lines dropped.
func crushShellCut(text string) string {
	const limit = 30_000
	if utf8.RuneCountInString(text) <= limit {
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
			if err != nil || res == nil || !tools(call.Name) || len(res.Cuts) > 0 {
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
			if !IsRead(call.Name) {
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
			if err := v.Replace(i, []harness.Part{harness.TextPart(fmt.Sprintf("Old environment output: (%d lines omitted)", strings.Count(text, "\n")+1))},
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
			if err := v.Replace(i, []harness.Part{harness.TextPart("<MASKED>")}, harness.Cut{Kind: harness.CutCleared, By: "openhands", BytesIn: len(text)}); err != nil {
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
			if err := v.Replace(i, []harness.Part{harness.TextPart(placeholder)}, harness.Cut{Kind: harness.CutCleared, By: "anthropic-context-editing", BytesIn: len(text)}); err != nil {
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

// The measured peers: each real CLI (Claude Code 2.1.197, Codex 0.171.0,
// Gemini CLI 0.61.0, opencode 1.18.33) was run on one `cat` of a
// 307,272-byte file, and what its model was shown measured: Claude Code
// 2,230 bytes (a 2 KB head preview, the rest in a file), Codex 10,212
// characters (5,000 bytes of head and 5,000 of tail, nothing kept),
// Gemini CLI 40,281 bytes (8,000 head and 32,000 tail characters, the rest
// in a file), opencode 51 KB of tail (the rest in a file). The cuts below
// reproduce those rules and sizes (TestMeasuredPeers).

// claudePersisted is Claude Code's notice for a result it saved to a file
// (Bash output over 30,000 characters): the size, the path, and the first
// 2,000 bytes, cut back to a whole character.
func claudePersisted(text, loc string) string {
	return fmt.Sprintf("<persisted-output>\nOutput too large (%s). Full output saved to: %s\n\nPreview (first 2KB):\n%s\n...\n</persisted-output>",
		sizeKB(len(text)), loc, strings.ToValidUTF8(text[:min(len(text), 2_000)], ""))
}

// sizeKB formats a byte count as Claude Code does: 84.3KB, 1.2MB.
func sizeKB(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1fMB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1fKB", float64(n)/(1<<10))
}

// geminiThreshold is Gemini CLI's truncateToolOutputThreshold: a result
// over 40,000 characters keeps its first fifth and last four fifths of
// that (8,000 head, 32,000 tail), the whole output saved to a file.
const geminiThreshold = 40_000

// geminiCut is Gemini CLI's cut of a result over geminiThreshold
// characters, naming the file that holds it all ("" when none was saved).
func geminiCut(text, loc string) string {
	head, tail := headChars(text, geminiThreshold/5), tailChars(text, geminiThreshold*4/5)
	omitted := utf8.RuneCountInString(text) - utf8.RuneCountInString(head) - utf8.RuneCountInString(tail)
	see := ""
	if loc != "" {
		see = " For full output see: " + loc
	}
	return fmt.Sprintf("Output too large. Showing first %s and last %s characters.%s\n\n%s\n\n... [%d characters omitted] ...\n\n%s",
		"8,000", "32,000", see, head, omitted, tail)
}

// opencodeLimit are opencode's output limits (ToolOutputStore MAX_BYTES
// and MAX_LINES), which its shell, read and every other tool each apply
// in their own way.
const (
	opencodeBytes = 50 << 10
	opencodeLines = 2_000
)

// opencodeOver reports whether opencode cuts text, its shell's output or
// an MCP tool's result (Truncate.output): more than 2,000 lines (split at
// \n, so its newlines plus one) or more than 50 KiB.
func opencodeOver(text string) bool {
	return len(text) > opencodeBytes || strings.Count(text, "\n")+1 > opencodeLines
}

// opencodeCut is opencode 1.18.33's cut of a shell result (the shell
// tool's own, read off the binary and measured: one 307,342-byte cat
// reached the proxy as 51,343 characters): the last lines (split at \n)
// whose bytes, with the newlines between them, fit in 50 KiB, at most
// 2,000 (of a last line longer than that, its last whole characters within
// 50 KiB), after "...output truncated..." and the file that holds it all
// ("" when none was saved). How much opencode keeps also depends on how
// the pipe's reads fell (it holds the last reads within 100 KB, dropping
// whole reads from the front): this is the case where they left it 50 KB.
func opencodeCut(text, loc string) string {
	lines := strings.Split(text, "\n")
	var kept []string // from the last line back
	size := 0
	for i := len(lines) - 1; i >= 0 && len(kept) < opencodeLines; i-- {
		add := len(lines[i])
		if len(kept) > 0 {
			add++
		}
		if size+add > opencodeBytes {
			if len(kept) == 0 {
				kept = append(kept, strings.ToValidUTF8(lines[i][len(lines[i])-opencodeBytes:], ""))
			}
			break
		}
		kept = append(kept, lines[i])
		size += add
	}
	slices.Reverse(kept)
	note := "...output truncated...\n\n"
	if loc != "" {
		note += "Full output saved to: " + loc + "\n\n"
	}
	return note + strings.Join(kept, "\n")
}

// opencodeLineChars is the read tool's limit on one line, in JavaScript
// string length (UTF-16 code units); a longer line is cut to it and
// followed by opencodeLineNote.
const (
	opencodeLineChars = 2_000
	opencodeLineNote  = "... (line truncated to 2000 chars)"
)

// opencodeReadLine is the read tool's cut of one line: its first 2,000
// UTF-16 code units and opencodeLineNote, reporting whether it cut. A
// character of two code units that straddles the limit is dropped whole
// (JavaScript keeps half of it, which no UTF-8 text can hold).
func opencodeReadLine(line string) (string, bool) {
	if len(line) <= opencodeLineChars { // never more code units than bytes
		return line, false
	}
	units := 0
	for i, r := range line {
		w := 1
		if r > 0xFFFF {
			w = 2
		}
		if units+w > opencodeLineChars {
			return line[:i] + opencodeLineNote, true
		}
		units += w
	}
	return line, false
}

// opencodeReadCut is opencode's read tool (1.18.33 ReadTool.lines, no
// offset or limit) applied to a result's text: lines split at \n or
// \r\n, each cut by opencodeReadLine, and the first of them whose bytes,
// counting the \n between them, fit in 50 KiB, at most 2,000; then its
// note on how to read on. The second result reports whether a limit
// bound; when none did, text is returned as it is. opencode's wrapper
// (the path, the <content> tags, the line numbers) is left out: the
// recorded text carries its own agent's.
func opencodeReadCut(text string) (string, bool) {
	lines := strings.Split(text, "\n")
	if lines[len(lines)-1] == "" { // a final \n ends the last line, it starts none
		lines = lines[:len(lines)-1]
	}
	var b strings.Builder
	size, shown, capped, cut := 0, 0, false, false
	for _, line := range lines {
		if shown == opencodeLines {
			break
		}
		line, c := opencodeReadLine(strings.TrimSuffix(line, "\r"))
		cut = cut || c
		add := len(line)
		if shown > 0 {
			add++
		}
		if size+add > opencodeBytes {
			capped = true
			break
		}
		if shown > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(line)
		size += add
		shown++
	}
	switch {
	case capped:
		fmt.Fprintf(&b, "\n\n(Output capped at 50 KB. Showing lines 1-%d. Use offset=%d to continue.)", shown, shown+1)
	case shown < len(lines):
		fmt.Fprintf(&b, "\n\n(Showing lines 1-%d of %d. Use offset=%d to continue.)", shown, len(lines), shown+1)
	case !cut:
		return text, false
	}
	return b.String(), true
}

// opencodeReadOver reports whether opencode's read tool cuts text.
func opencodeReadOver(text string) bool {
	_, cut := opencodeReadCut(text)
	return cut
}

// opencodeTaskHint is what opencode says after a cut output when the agent
// may call its task tool (the default agent may): where the whole output
// is, and to have a subagent read it.
func opencodeTaskHint(loc string) string {
	return "The tool call succeeded but the output was truncated. Full output saved to: " + loc +
		"\nUse the Task tool to have explore agent process this file with Grep and Read (with offset/limit). Do NOT read the full file yourself - delegate to save context."
}

// opencodeHeadCut is opencode 1.18.33's Truncate.output from the head,
// which it applies to an MCP tool's result (measured through the proxy:
// the filesystem server's read of the 307,342-byte lock file came as its
// first 1,297 lines, 51,197 bytes, then "...256145 bytes truncated..."
// and the hint): the first lines (split at \n) whose bytes, with the
// newlines between them, fit in 50 KiB, at most 2,000; then how many bytes
// were cut (or lines, when the line limit stopped it) and the hint.
func opencodeHeadCut(text, loc string) string {
	lines := strings.Split(text, "\n")
	size, k, hitBytes := 0, 0, false
	for ; k < len(lines) && k < opencodeLines; k++ {
		add := len(lines[k])
		if k > 0 {
			add++
		}
		if size+add > opencodeBytes {
			hitBytes = true
			break
		}
		size += add
	}
	unit, removed := "lines", len(lines)-k
	if hitBytes {
		unit, removed = "bytes", len(text)-size
	}
	return fmt.Sprintf("%s\n\n...%d %s truncated...\n\n%s", strings.Join(lines[:k], "\n"), removed, unit, opencodeTaskHint(loc))
}

// geminiCLIPreset is Gemini CLI's result rule as measured.
func geminiCLIPreset() Preset {
	return Preset{Name: "gemini-cli", Doc: "Gemini CLI 0.61.0 (measured: 40,281 bytes shown of a 307,272-byte cat): every result over 40,000 characters saved to a file and shown as its first 8,000 and last 32,000 characters with the path; compaction at 70% of the window (clearing stood in for its summary); its masking of older outputs is not reproduced",
		Build: func(env replayengine.Env) (*replayengine.Config, error) {
			return &replayengine.Config{
				Guards:   []harness.Guard{capGuard(capRule{by: "gemini-cli", over: geminiThreshold, spillShow: geminiCut, cut: func(s string) string { return geminiCut(s, "") }})},
				Policies: []harness.ViewPolicy{&policy.CompactPolicy{HighWater: 0.70, Target: 0.30, Model: env.Model, Counter: env.Counter, Window: ModelWindow(env.Model), NoRecall: true, NoClearOld: true, NoKeepActive: true, NoClearWhenIdle: true, Unbounded: true}},
			}, nil
		}}
}

// opencodePreset is opencode's result rules as measured and as read off
// its binary: each tool kind cut its own way.
func opencodePreset() Preset {
	return Preset{Name: "opencode", Doc: "opencode 1.18.33 (measured through the proxy: 51,343 characters of tail shown of a 307,342-byte cat, the read tool's first 50 KB; the rules read off its binary), every limit 50 KiB and 2,000 lines: a shell result over them saved to a file and shown as its last lines within both after a note with the path; a read shown as its first lines within both (each line cut to 2,000 characters) and a note on the offset to read on, nothing saved; any other tool's result (MCP tools; its grep, glob and fetch cap themselves) over them saved to a file and shown as its first lines within both, how much was cut, and the path (measured through the proxy with the filesystem MCP server); compaction near the window (90%, clearing stood in for its summary); its pruning of old outputs is not reproduced",
		Build: func(env replayengine.Env) (*replayengine.Config, error) {
			return &replayengine.Config{
				Guards: []harness.Guard{capGuard(
					capRule{by: "opencode", tools: IsShell, when: opencodeOver, spillShow: opencodeCut, cut: func(s string) string { return opencodeCut(s, "") }},
					capRule{by: "opencode", tools: IsRead, when: opencodeReadOver, cut: func(s string) string { out, _ := opencodeReadCut(s); return out }},
					capRule{by: "opencode", when: opencodeOver, spillShow: opencodeHeadCut, cut: func(s string) string { return opencodeHeadCut(s, "") }},
				)},
				Policies: []harness.ViewPolicy{&policy.CompactPolicy{HighWater: 0.90, Target: 0.55, Model: env.Model, Counter: env.Counter, Window: ModelWindow(env.Model), NoRecall: true, NoClearOld: true, NoKeepActive: true, NoClearWhenIdle: true, Unbounded: true}},
			}, nil
		}}
}

// harnessRSPreset is harness-rs's defaults: its ToolResultPolicy, stuck
// detection (repeats only) and compaction.
func harnessRSPreset() Preset {
	return Preset{Name: "harness-rs", Doc: "harness-rs ToolResultPolicy defaults: max_bytes 24 KiB, spill on, 4 KiB head preview, dedupe off; StuckPolicy nudge after 3 identical rounds, abort after 6; compaction from 75% down to 55% of the window (its budget-reduce stage stood in for by clearing old results); no recall tool — spill files only",
		Build: func(env replayengine.Env) (*replayengine.Config, error) {
			return &replayengine.Config{
				Guards: []harness.Guard{(&guard.ResultPolicy{MaxBytes: 24 << 10, Preview: guard.HeadTail{Head: 4 << 10}}).Guard()},
				Policies: []harness.ViewPolicy{
					&policy.StuckPolicy{NudgeAfter: 3, AbortAfter: 6, NoAlternate: true, NoFailingCall: true},
					&policy.CompactPolicy{HighWater: 0.75, Target: 0.55, Model: env.Model, Counter: env.Counter, Window: ModelWindow(env.Model), NoRecall: true, NoClearOld: true, NoKeepActive: true, NoClearWhenIdle: true, Unbounded: true},
				},
			}, nil
		}}
}

// claudeCodePreset is Claude Code's result rules and auto-compaction.
func claudeCodePreset() Preset {
	return Preset{Name: "claude-code", Doc: "Claude Code: Bash output over 30,000 chars and other built-in results over 50,000 chars spilled to a file with a 2 KB head preview and the path; MCP results over 25,000 tokens refused with an error; unchanged re-reads of a file replaced by a stub; auto-compact near the window (92%, clearing stood in for the summary); every tool schema on every request: its deferred tool search (tool definitions over 10% of the window) loads schemas through ToolSearch calls the model makes, extra rounds a recording without them cannot replay honestly",
		Build: func(env replayengine.Env) (*replayengine.Config, error) {
			return &replayengine.Config{
				Guards: []harness.Guard{
					readDedupe("claude-code"),
					capGuard(
						capRule{by: "claude-code", tools: IsShell, over: 30_000, spillShow: claudePersisted, cut: func(s string) string { return headChars(s, 30_000) }},
						capRule{by: "claude-code", tools: builtin, over: 50_000, spillPreview: 2_000, cut: func(s string) string { return headChars(s, 50_000) }},
					),
					tokenRule(env.Counter, "claude-code", func(n string) bool { return !builtin(n) }, 25_000, claudeTokenError(env.Counter, 25_000, "MCP tool response")),
				},
				Policies: []harness.ViewPolicy{&policy.CompactPolicy{HighWater: 0.92, Target: 0.55, Model: env.Model, Counter: env.Counter, Window: ModelWindow(env.Model), NoRecall: true, NoClearOld: true, NoKeepActive: true, NoClearWhenIdle: true, Unbounded: true}},
			}, nil
		}}
}

// codexPreset is Codex CLI's output cut and compaction.
func codexPreset() Preset {
	return Preset{Name: "codex", Doc: "Codex CLI: every tool output over 10,000 bytes cut to head + tail with a 'Total output lines' header and '…N tokens truncated…'; no spill; compaction at 90% of the window; every tool schema on every request: its tool search is a model-driven discovery call (search_tool_bm25), not a rule a replay can apply",
		Build: func(env replayengine.Env) (*replayengine.Config, error) {
			return &replayengine.Config{
				Guards:   []harness.Guard{capGuard(capRule{by: "codex", over: 10_000, bytes: true, cut: codexCut})},
				Policies: []harness.ViewPolicy{&policy.CompactPolicy{HighWater: 0.90, Target: 0.55, Model: env.Model, Counter: env.Counter, Window: ModelWindow(env.Model), NoRecall: true, NoClearOld: true, NoKeepActive: true, NoClearWhenIdle: true, Unbounded: true}},
			}, nil
		}}
}

// sweAgentPreset is SWE-agent's observation cut and history processor.
func sweAgentPreset() Preset {
	return Preset{Name: "swe-agent", Doc: "SWE-agent: observations over 100,000 chars cut to the head with a note suggesting head/tail/grep; history processor keeping the last 5 observations (older ones become 'Old environment output: (N lines omitted)')",
		Build: func(replayengine.Env) (*replayengine.Config, error) {
			return &replayengine.Config{
				Guards:   []harness.Guard{capGuard(capRule{by: "swe-agent", over: 100_000, cut: sweAgentCut})},
				Policies: []harness.ViewPolicy{lastNObservations(5)},
			}, nil
		}}
}

// openHandsPreset is OpenHands' observation cut and masking.
func openHandsPreset() Preset {
	return Preset{Name: "openhands", Doc: "OpenHands: observations over 30,000 chars cut in the middle; observation masking outside an attention window of the newest 100 messages",
		Build: func(replayengine.Env) (*replayengine.Config, error) {
			return &replayengine.Config{
				Guards:   []harness.Guard{capGuard(capRule{by: "openhands", over: 30_000, cut: openHandsCut})},
				Policies: []harness.ViewPolicy{observationMasking(100)},
			}, nil
		}}
}

// crushPreset is crush's result cuts, loop detection and compaction.
func crushPreset() Preset {
	return Preset{Name: "crush", Doc: "crush: bash output over 30,000 chars cut to head + tail; view 200 lines; fetch 100 KB; MCP results uncapped; a (tool, input, output) repeated more than 5 times in the last 10 steps stops the turn; compaction at 20% left (80% of the window)",
		Build: func(env replayengine.Env) (*replayengine.Config, error) {
			return &replayengine.Config{
				Guards: []harness.Guard{capGuard(
					capRule{by: "crush", tools: IsShell, over: 30_000, cut: crushShellCut},
					capRule{by: "crush", tools: IsRead, when: func(s string) bool { return strings.Count(s, "\n") > 200 }, cut: crushViewCut},
					capRule{by: "crush", tools: isFetch, over: 100_000, bytes: true, cut: func(s string) string { return strings.ToValidUTF8(s[:100_000], "") }},
				)},
				Policies: []harness.ViewPolicy{crushStuck(10, 5), &policy.CompactPolicy{HighWater: 0.80, Target: 0.55, Model: env.Model, Counter: env.Counter, Window: ModelWindow(env.Model), NoRecall: true, NoClearOld: true, NoKeepActive: true, NoClearWhenIdle: true, Unbounded: true}},
			}, nil
		}}
}

// anthropicContextEditingPreset is the Anthropic API's clear_tool_uses context
// edit.
func anthropicContextEditingPreset() Preset {
	return Preset{Name: "anthropic-context-editing", Doc: "Anthropic API context editing: clear_tool_uses with trigger 100,000 input tokens, keep 3 tool uses, clear_at_least 10,000 tokens, applied to every request as it arrives",
		Build: func(env replayengine.Env) (*replayengine.Config, error) {
			return &replayengine.Config{Policies: []harness.ViewPolicy{clearToolUses(env.Counter, 100_000, 3, 10_000)}}, nil
		}}
}
