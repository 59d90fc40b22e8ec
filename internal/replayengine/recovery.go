package replayengine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentharness/harness/replay"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/locator"
	"github.com/agentharness/harness/internal/promptunit"
	"github.com/agentharness/harness/tokens"
)

// The page a recovering read returns: the lines holding the needles and
// recoveryContextLines lines on each side, at most recoveryPageBytes bytes
// (read_file's page, workspace.DefaultReadMaxBytes). Needles of one source
// whose pages would touch are read by one call.
const (
	recoveryContextLines = 20
	recoveryPageBytes    = 20000
	// recoveryMinPage is the shortest cut a narrowed re-run is priced
	// under: a cut shorter shows no page of the output.
	recoveryMinPage = 200
)

// How a hidden needle is brought back (Recovery.Via).
const (
	viaSpill  = "spill"  // a read of the spill file that holds it
	viaRecall = "recall" // the recall tool on the store's copy
	viaRerun  = "rerun"  // the read-only call run again
)

// Recovery is the round a live agent would make before a request that
// uses needles the request no longer shows: one call per page it reads
// back. With Config.SendRecoveries, when the request could make tool
// calls and some needle of the round is one keeping everything would have
// shown (the bench charges only those), the round is Sent: the replay
// sends it as the live agent does, a request the policies build (a
// CallStat of Index 0, at index At) answered with the round's calls,
// whose results (the pages, past the guards: a page is what the agent
// reads) join the conversation, so every later request carries them and
// every policy sees them (the savings bank can charge a re-read).
// Otherwise the bench prices the round from its figures: a request of the
// whole prefix before request At, the calls' output tokens, and Added
// tokens in every later request.
type Recovery struct {
	// At is the index in Report.Calls of the request the round precedes;
	// of the round's own request when Sent (the call's is the next).
	At int
	// Needles are the texts of the needles the round brings back, and
	// Sources the call id of the result each came from (in Needles'
	// order); Via counts its calls by how they read (spill, recall,
	// rerun).
	Needles []string
	Sources []string
	Via     map[string]int
	// Output is the tokens of the round's calls; Added the tokens its
	// assistant message and results add to every later request.
	Output, Added int
	// Cleared, when not 0, is the index in Report.Calls of the first
	// request whose view has cleared the round (see forget); from it on
	// the round adds Kept tokens instead of Added: its calls and a
	// placeholder per result, as the policy clears a result.
	Cleared, Kept int
	// Sent says the round is in Report.Calls and the conversation.
	Sent bool
}

// recoveryPrefix starts the call ids of a recovery round's calls.
const recoveryPrefix = "recover-"

// isRecovery reports whether callID is a call of a recovery round.
func isRecovery(callID string) bool { return strings.HasPrefix(callID, recoveryPrefix) }

// recoveredRound is what the replay keeps of a recovery round: the texts
// it read back, the index in Report.Results of the first result admitted
// after it, and whether the policy has cleared it since (a Sent round is
// in the view itself: cleared is set from the start).
type recoveredRound struct {
	texts   []string
	after   int
	cleared bool
}

// holds reports whether a recovery round the policy has not cleared read
// back s: its page is in every later request. A Sent round's page holds
// it while v shows the page uncleared.
func (e *engine) holds(v *harness.View, s string) bool {
	for _, r := range e.recovered {
		if !r.cleared && containsAny(r.texts, s) {
			return true
		}
	}
	for _, m := range v.Messages {
		if m.Role == harness.RoleTool && isRecovery(m.ToolCallID) && strings.Contains(m.Text(), s) {
			return true
		}
	}
	return false
}

// forget marks the recovery rounds that v clears. A live agent's round
// is a round of the conversation like any other, so a policy that clears
// old results clears it with them: when v shows cleared a result admitted
// after the round, a clear has reached past the round's place, and the
// round's results, older, are taken as cleared too. From v's request on
// the round adds its calls and a placeholder per result (v's own, the
// last cleared message it shows), and its pages hold no needle.
func (e *engine) forget(v *harness.View) {
	if !slices.ContainsFunc(e.recovered, func(r recoveredRound) bool { return !r.cleared }) {
		return
	}
	cleared := map[string]bool{}
	placeholder := ""
	for i, m := range v.Messages {
		if m.Role == harness.RoleTool && state(resultCuts(v.Origins[i].Result), v.Origins[i].Cuts) == string(harness.CutCleared) {
			cleared[m.ToolCallID] = true
			placeholder = m.Text()
		}
	}
	if len(cleared) == 0 {
		return
	}
	stub := harness.Message{Role: harness.RoleTool, Parts: []harness.Part{harness.TextPart(placeholder)}}
	for i := range e.recovered {
		r := &e.recovered[i]
		if r.cleared || !slices.ContainsFunc(e.report.Results[r.after:], func(x ResultStat) bool { return cleared[x.CallID] }) {
			continue
		}
		r.cleared = true
		rec := &e.report.Recoveries[i]
		rec.Cleared = len(e.report.Calls)
		rec.Kept = rec.Output + promptunit.MessageOverhead + len(r.texts)*tokens.CountMessage(e.opts.Counter, &stub)
	}
}

// recoveryRead is one call of a recovery round: the source a page is
// taken from and the needles' byte offsets in it.
type recoveryRead struct {
	via, key string
	call     harness.ToolCall
	source   string
	// whole: the call returns source whole (a re-run whose cut at arrival
	// shows the needles), not a page of it.
	whole   bool
	limit   int // most bytes of a page (0: recoveryPageBytes)
	offsets []int
	needles []string
	sources []string // the result each of needles came from
}

// recover adds the round that brings back the needles of hidden that v
// does not show and no earlier recovery round holds, before the request
// v is built for (the next of Report.Calls; req is v's request). A needle
// no read-only path brings back is listed in Report.Unrecovered. sent
// says the round was sent (Recovery.Sent): v's request was its request,
// and the call's request must be built again.
func (e *engine) recover(ctx context.Context, turn *harness.Turn, v *harness.View, req *harness.Request, hidden []Needle) (sent bool, err error) {
	reads := map[string]*recoveryRead{}
	var order []string
	charged, kept := false, []string(nil)
	for _, n := range hidden {
		if e.holds(v, n.Text) {
			continue // an earlier round's page is in every later request
		}
		r := e.recoveryRead(v, n)
		if r == nil {
			e.report.Unrecovered = append(e.report.Unrecovered, n.Text)
			continue
		}
		r.needles, r.sources = []string{n.Text}, []string{n.CallID}
		if !charged {
			if kept == nil {
				kept = keptTexts(v)
			}
			charged = containsAny(kept, n.Text)
		}
		if old, ok := reads[r.key]; ok {
			old.offsets = append(old.offsets, r.offsets...)
			old.needles = append(old.needles, n.Text)
			old.sources = append(old.sources, n.CallID)
			continue
		}
		reads[r.key] = r
		order = append(order, r.key)
	}
	if len(order) == 0 {
		return false, nil
	}
	rec := Recovery{At: len(e.report.Calls), Via: map[string]int{}, Sent: e.cfg.SendRecoveries && charged && !v.Final && v.Stop == ""}
	msg := harness.Message{Role: harness.RoleAssistant}
	var results []string
	for _, k := range order {
		r := reads[k]
		rec.Needles = append(rec.Needles, r.needles...)
		rec.Sources = append(rec.Sources, r.sources...)
		for _, p := range r.pages() {
			call := r.call
			call.ID = fmt.Sprintf("%s%d-%d", recoveryPrefix, rec.At, len(msg.ToolCalls))
			if !r.whole {
				call.Args = r.pageArgs(p)
			}
			msg.ToolCalls = append(msg.ToolCalls, call)
			results = append(results, r.source[p[0]:p[1]])
			rec.Via[r.via]++
		}
	}
	rec.Added = tokens.CountMessage(e.opts.Counter, &msg)
	rec.Output = rec.Added - promptunit.MessageOverhead
	for i, text := range results {
		m := harness.Message{Role: harness.RoleTool, ToolCallID: msg.ToolCalls[i].ID, Parts: []harness.Part{harness.TextPart(text)}}
		rec.Added += tokens.CountMessage(e.opts.Counter, &m)
	}
	if e.cfg.Reread != nil {
		e.cfg.Reread(slices.Clone(msg.ToolCalls))
	}
	e.recovered = append(e.recovered, recoveredRound{texts: results, after: len(e.report.Results), cleared: rec.Sent})
	e.report.Recoveries = append(e.report.Recoveries, rec)
	if !rec.Sent {
		return false, nil
	}
	return true, e.send(ctx, turn, v, req, msg, results, rec.Output)
}

// send answers req, the request built from v, with msg (a recovery
// round's calls, out output tokens) and appends the round with the pages
// of results as its calls' results: what a live agent's round of reads
// adds to the conversation.
func (e *engine) send(ctx context.Context, turn *harness.Turn, v *harness.View, req *harness.Request, msg harness.Message, results []string, out int) error {
	round := e.addedRound(ctx, turn, v, req, msg, out)
	for i, c := range round.Assistant.ToolCalls {
		res := &harness.ToolResult{CallID: c.ID, Tool: c.Name, Parts: []harness.Part{harness.TextPart(results[i])}}
		res.Bytes = res.PayloadSize()
		round.Results = append(round.Results, res)
	}
	if err := e.eng.AppendRound(ctx, e.conv, turn, round); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	return nil
}

// keptTexts are the texts of v's messages as keeping everything shows
// them: every tool result whole, a recovery round's pages left out. A
// needle none of them holds is the recording's doing (keeping everything
// hides it too), which the bench charges no preset for.
func keptTexts(v *harness.View) []string {
	var out []string
	for i, m := range v.Messages {
		switch {
		case isRecovery(m.ToolCallID):
		case m.Role == harness.RoleTool && v.Origins[i].Result != nil:
			whole := harness.Message{Role: harness.RoleTool, Parts: v.Origins[i].Result.FullParts()}
			out = append(out, whole.Text())
		default:
			out = append(out, m.Text())
			for _, c := range m.ToolCalls {
				out = append(out, string(c.Args))
			}
		}
	}
	return out
}

// recoveryRead is how the agent reads back needle n, hidden from v: a
// page of the spill file of its result that holds it, else (when the
// system recalls stored results) a page of the stored result, else (a
// read-only call) the call run again, or nil when nothing brings it back.
func (e *engine) recoveryRead(v *harness.View, n Needle) *recoveryRead {
	full, call, ok := e.recordedCall(n.CallID)
	if !ok {
		return nil
	}
	if loc, text, ok := e.spillOf(v, n); ok {
		if i := strings.Index(text, n.Text); i >= 0 {
			return &recoveryRead{via: viaSpill, key: "spill:" + loc, source: text, offsets: []int{i},
				call: harness.ToolCall{Name: "read_file", Args: json.RawMessage(`{"path":` + quote(loc) + `}`)}}
		}
	}
	i := strings.Index(full, n.Text)
	if i < 0 {
		i = 0 // in the structured output only: a page from its start
	}
	if e.cfg.Recall {
		return &recoveryRead{via: viaRecall, key: "call:" + n.CallID, source: full, offsets: []int{i},
			call: harness.ToolCall{Name: "recall", Args: json.RawMessage(`{"call_id":` + quote(n.CallID) + `}`)}}
	}
	if !readOnly(e.spec(call), call) {
		return nil
	}
	r := &recoveryRead{via: viaRerun, key: "rerun:" + n.CallID, call: call}
	shown := ""
	if res := e.conv.FindResult(n.CallID); res != nil {
		shown = res.ModelText()
	}
	if j := strings.Index(shown, n.Text); j >= 0 {
		// Its cut at arrival shows the needle: the re-run returns that cut.
		r.source, r.whole, r.offsets = shown, true, []int{j}
		return r
	}
	// The preset's cut hides it: the agent narrows the call to the
	// needle's lines, a page no longer than the cut it was shown; a cut
	// that shows next to nothing (a bound's) shows no page either.
	if utf8.RuneCountInString(shown) < recoveryMinPage {
		return nil
	}
	r.key += ":narrow"
	r.source, r.offsets, r.limit = full, []int{i}, min(recoveryPageBytes, utf8.RuneCountInString(shown))
	return r
}

// recordedCall finds the recorded result of callID and the call that
// made it: the result's full text and the call.
func (e *engine) recordedCall(callID string) (string, harness.ToolCall, bool) {
	if e.calls == nil {
		e.calls = map[string]recorded{}
		for _, t := range e.rec.Turns {
			for _, c := range t.Calls {
				for _, tc := range c.Assistant.ToolCalls {
					e.calls[tc.ID] = recorded{call: tc}
				}
				for _, r := range c.Results {
					x := e.calls[r.CallID]
					x.result = r
					e.calls[r.CallID] = x
				}
			}
		}
	}
	x, ok := e.calls[callID]
	if !ok || x.result == nil {
		return "", harness.ToolCall{}, false
	}
	if x.call.Name == "" {
		x.call = harness.ToolCall{ID: callID, Name: x.result.Tool}
	}
	return x.result.FullText(), x.call, true
}

// recorded is one recorded tool call and its result.
type recorded struct {
	call   harness.ToolCall
	result *replay.Result
}

// spillOf returns the locator and text of the spill file a cut of n's
// result in v names.
func (e *engine) spillOf(v *harness.View, n Needle) (string, string, bool) {
	for i, m := range v.Messages {
		if m.Role != harness.RoleTool || m.ToolCallID != n.CallID {
			continue
		}
		for _, c := range append(slices.Clone(resultCuts(v.Origins[i].Result)), v.Origins[i].Cuts...) {
			if c.Locator == "" || locator.IsCall(c.Locator) {
				continue
			}
			p := filepath.Join(e.ws, filepath.FromSlash(c.Locator))
			if rel, err := filepath.Rel(e.ws, p); err != nil || strings.HasPrefix(rel, "..") {
				continue
			}
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), n.Text) {
				return c.Locator, string(b), true
			}
		}
	}
	return "", "", false
}

// readOnly reports whether running call again changes nothing: its tool
// is declared read-only, or it is a shell call whose command only reads
// (shellRisk), or a tool of the recorded agents that only reads.
func readOnly(spec harness.ToolSpec, call harness.ToolCall) bool {
	if spec.Risk.IsReadOnly() {
		return true
	}
	if spec.Risk != 0 && spec.Risk.Has(harness.Destructive) {
		return false
	}
	if readTools[strings.ToLower(call.Name)] {
		return true
	}
	if cmd, ok := shellCommand(call.Args); ok {
		b, _ := json.Marshal(map[string]string{"command": cmd})
		return shellRisk(b) == harness.ReadOnly
	}
	return false
}

// readTools are the recorded agents' tools that only read (Claude Code,
// Gemini CLI, opencode, harness's workspace), by lower-case name.
var readTools = map[string]bool{
	"read": true, "read_file": true, "read_many_files": true, "view": true, "grep": true, "glob": true,
	"ls": true, "list": true, "list_directory": true, "search_file_content": true, "notebookread": true,
	"webfetch": true, "web_fetch": true, "websearch": true, "web_search": true, "google_web_search": true,
	"recall": true,
}

// shellCommand returns the script of a shell call's arguments: a
// "command" or "cmd" string, or an argv array whose last element is the
// script of "bash -lc" (Codex).
func shellCommand(args json.RawMessage) (string, bool) {
	var a struct {
		Command json.RawMessage `json:"command"`
		Cmd     json.RawMessage `json:"cmd"`
	}
	if json.Unmarshal(args, &a) != nil {
		return "", false
	}
	raw := a.Command
	if len(raw) == 0 {
		raw = a.Cmd
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		return s, true
	}
	var argv []string
	if json.Unmarshal(raw, &argv) != nil || len(argv) == 0 {
		return "", false
	}
	if len(argv) >= 3 && (argv[1] == "-lc" || argv[1] == "-c") {
		return argv[len(argv)-1], true
	}
	return strings.Join(argv, " "), true
}

// pages returns the byte ranges of r.source its calls return: the whole
// source, or one page per group of needles whose pages touch and fit in
// one page together.
func (r *recoveryRead) pages() [][2]int {
	if r.whole {
		return [][2]int{{0, len(r.source)}}
	}
	limit := r.limit
	if limit <= 0 {
		limit = recoveryPageBytes
	}
	offs := slices.Clone(r.offsets)
	slices.Sort(offs)
	var out [][2]int
	from := -1
	for _, o := range offs {
		p := page(r.source, o, o, limit)
		if k := len(out) - 1; k >= 0 && p[0] <= out[k][1] {
			if m := page(r.source, from, o, limit); m[0] <= from && m[1] > o {
				out[k] = m
				continue
			}
		}
		out, from = append(out, p), o
	}
	return out
}

// page is the range of s a read returns for needles between byte offsets
// from and to: their lines and recoveryContextLines lines on each side,
// at most limit bytes around them.
func page(s string, from, to, limit int) [2]int {
	start := strings.LastIndexByte(s[:from], '\n') + 1
	for range recoveryContextLines {
		if start == 0 {
			break
		}
		start = strings.LastIndexByte(s[:start-1], '\n') + 1
	}
	end := to
	for range recoveryContextLines + 1 {
		j := strings.IndexByte(s[end:], '\n')
		if j < 0 {
			end = len(s)
			break
		}
		end += j + 1
	}
	if end-start > limit {
		mid := (from + to) / 2
		start = max(start, mid-limit/2)
		end = min(end, start+limit)
	}
	return [2]int{start, end}
}

// pageArgs are the arguments of a read of page p: the call's own with the
// page's offset and limit (read_file counts lines, recall characters, a
// narrowed re-run pipes through sed -n).
func (r *recoveryRead) pageArgs(p [2]int) json.RawMessage {
	first := strings.Count(r.source[:p[0]], "\n") + 1
	lines := strings.Count(r.source[p[0]:p[1]], "\n") + 1
	switch r.via {
	case viaSpill:
		return json.RawMessage(fmt.Sprintf(`{"path":%s,"offset":%d,"limit":%d}`, quote(r.key[len("spill:"):]), first, lines))
	case viaRecall:
		return json.RawMessage(fmt.Sprintf(`{"call_id":%s,"offset":%d,"limit":%d}`, quote(r.key[len("call:"):]), p[0], p[1]-p[0]))
	}
	return append(slices.Clip(r.call.Args), fmt.Sprintf(" | sed -n '%d,%dp'", first, first+lines-1)...)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
