package replay

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/clientctx"
	"github.com/agentharness/harness/internal/wire/anthropic"
)

// formatClaudeCode is a Claude Code session.
const formatClaudeCode = "claude-code"

// ccEntry is one line of a Claude Code session file.
type ccEntry struct {
	Type             string             `json:"type"`
	Subtype          string             `json:"subtype"`
	UUID             string             `json:"uuid"`
	ParentUUID       string             `json:"parentUuid"`
	IsSidechain      bool               `json:"isSidechain"`
	IsCompactSummary bool               `json:"isCompactSummary"`
	IsAPIError       bool               `json:"isApiErrorMessage"`
	AgentID          string             `json:"agentId"`
	SessionID        string             `json:"sessionId"`
	Timestamp        string             `json:"timestamp"`
	Message          *anthropic.Message `json:"message"`
	ToolUseResult    json.RawMessage    `json:"toolUseResult"`
	ccOutputEntry
}

// ccRun is one model context of a session being built: the main chain
// (one per compaction segment) or one subagent's sidechain.
type ccRun struct {
	rec     *Recording
	fold    turnFold         // user messages into turns: a prompt and the context Claude Code adds
	calls   map[string]*Call // message id → call (one response is split over entries)
	pending map[string]*Call // unanswered tool_use id → call
	msgs    int
	// counts for the warnings
	agentCut, fullKept, thinking, orphans, images int
}

// ccCounts are the file-wide counts the warnings report.
type ccCounts struct {
	apiErrors, attachments int
	// repeated counts the entries left out because an earlier file of
	// the load held them (same uuid).
	repeated int
	// output names the -p output the file is (ccStreamJSON, ccJSON), ""
	// for a session file.
	output string
}

// parseClaudeCodeAll imports a Claude Code session: the JSONL files Claude
// Code writes under ~/.claude/projects/<dir>/ (one per session, and
// agent-*.jsonl for subagents), or a JSON array of the same entries (as
// hooks dump them). It returns the main chain as Claude Code sent it to the
// model; parseClaudeCodeAll returns every model context in the file.
func parseClaudeCode(name string, data []byte) (*Recording, error) {
	recs, err := parseClaudeCodeAll(name, data, nil)
	if err != nil {
		return nil, err
	}
	return recs[0], nil
}

// parseClaudeCodeAll imports every model context of a Claude Code
// session, main chain first:
//
//   - entries of type user and assistant are the messages; one response
//     is written as several assistant entries (one per content block) with
//     one message id, and becomes one Call with the usage of its last entry
//     (message.usage: input, cache read and cache creation tokens, output);
//   - tool_result blocks answer tool_use blocks by id, so parallel calls
//     pair as they ran; a result is what Claude Code showed the model. When
//     Claude Code cut it ("Output too large … saved to: …"), the full text
//     is toolUseResult.stdout where that holds more (Claude Code keeps
//     30,000 characters there), and the cut is counted in a warning;
//   - each compaction (a user entry with isCompactSummary, or a
//     compact_boundary) starts a new recording whose first input is the
//     summary, as the requests after it started;
//   - sidechains (isSidechain: a subagent's own context) become recordings
//     of their own, one per chain;
//   - synthetic API error messages (isApiErrorMessage), thinking blocks
//     and the entries never sent to a model (summaries, snapshots,
//     progress, system notes) are left out; attachments (hook output and
//     listings Claude Code adds to requests) are counted in a warning.
//
// Claude Code records neither the system prompt nor the tool schemas; the
// warnings say so (see Supply).
//
// Load, LoadWith and LoadEach import each entry once across the files
// they read: a session that was resumed or copied repeats its parent's
// entries under the same uuids, and a later file's copies of entries an
// earlier file held are left out (a warning says how many), so each
// model call counts once: parseClaudeCodeAll leaves out the entries seen
// holds (nil: none) and adds the file's own to seen once the file is
// imported, so that entries a file repeats within itself stay.
func parseClaudeCodeAll(name string, data []byte, seen ccSeen) ([]*Recording, error) {
	src := &source{name: name, data: data}
	return parseClaudeCodeEach(src, records(src), seen)
}

// ccSeen holds the uuids of the Claude Code entries one load has
// imported, across its files.
type ccSeen map[string]struct{}

// parseClaudeCodeEach is parseClaudeCodeAll over the records each
// passes to its function one at a time (see records for partial); each
// entry is decoded and dropped, so memory holds one entry beyond what the
// recordings keep.
func parseClaudeCodeEach(src *source, each recordIter, seen ccSeen) ([]*Recording, error) {
	f := &ccFile{name: src.name, runOf: map[string]*ccRun{}}
	var mine []string
	partial, err := each(func(v rawValue, path string) error {
		var e ccEntry
		if err := src.decodeAt(v, path, &e); err != nil {
			return err
		}
		f.outputEntry(&e)
		if e.UUID != "" && seen != nil {
			if _, dup := seen[e.UUID]; dup {
				f.counts.repeated++
				return nil
			}
			mine = append(mine, e.UUID)
		}
		if run := f.route(&e); run != nil {
			return run.add(src, v, path, &e, &f.counts)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	name := src.name
	for _, id := range mine {
		seen[id] = struct{}{}
	}
	out := f.recordings()
	if len(out) == 0 && f.counts.repeated > 0 {
		return nil, src.errAt(0, "", fmt.Sprintf("every model call repeats an earlier file's (%d entries with the same uuids: a resumed or copied session, counted there)", f.counts.repeated), ErrNoModelCall)
	}
	if len(out) == 0 {
		return nil, src.errAt(0, "", "no assistant message", ErrNoModelCall)
	}
	if f.session == "" {
		f.session = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	}
	nside := 0
	for _, r := range out {
		if strings.HasPrefix(r.ID, "agent-") {
			nside++
		}
	}
	for _, r := range f.runs {
		if r.rec.Calls() > 0 {
			r.warn(f.session, f.segments, nside, len(out)-nside, f.counts, partial)
		}
	}
	return out, nil
}

// ccFile is a session file being split into its model contexts.
type ccFile struct {
	name     string
	runs     []*ccRun
	main     *ccRun            // the main chain's current segment
	split    bool              // a compact_boundary was seen: the next main entry starts a segment
	runOf    map[string]*ccRun // entry uuid → its sidechain's run
	counts   ccCounts
	session  string
	segments int
	// streamLast is, per subagent of a stream-json output (its
	// parent_tool_use_id), the uuid of its last message.
	streamLast map[string]string
}

func (f *ccFile) newRun(id string) *ccRun {
	r := &ccRun{rec: &Recording{Source: f.name, Format: formatClaudeCode, ID: id}, calls: map[string]*Call{}, pending: map[string]*Call{}}
	f.runs = append(f.runs, r)
	return r
}

// route returns the run an entry's message belongs to, nil for an entry
// that is not a message sent to a model.
func (f *ccFile) route(e *ccEntry) *ccRun {
	if f.session == "" && e.SessionID != "" {
		f.session = e.SessionID
	}
	message := (e.Type == "user" || e.Type == "assistant") && e.Message != nil
	if e.IsSidechain && !message {
		// Not a message, but a link in its sidechain: a message whose
		// parent it is belongs to the same chain.
		if run := f.runOf[e.ParentUUID]; run != nil {
			f.runOf[e.UUID] = run
		}
	}
	switch {
	case e.Type == "attachment":
		f.counts.attachments++
		return nil
	case e.Type == "system" && e.Subtype == "compact_boundary":
		f.split = true
		return nil
	case !message:
		return nil
	case e.IsSidechain:
		run := f.runOf[e.ParentUUID]
		if run == nil {
			label := e.AgentID
			if label == "" {
				label = fmt.Sprint(len(f.runs))
			}
			run = f.newRun("agent-" + label)
		}
		f.runOf[e.UUID] = run
		return run
	}
	if f.main == nil || ((f.split || e.IsCompactSummary) && f.main.msgs > 0) {
		f.segments++
		f.main = f.newRun(fmt.Sprintf("part-%d", f.segments))
	}
	f.split = false
	return f.main
}

// recordings are the runs that made a model call: the main chain's
// segments in order, then the sidechains.
func (f *ccFile) recordings() []*Recording {
	for _, r := range f.runs {
		r.fold.end(r.rec) // context no prompt followed is a turn of its own
	}
	var out []*Recording
	for _, sidechains := range []bool{false, true} {
		for _, r := range f.runs {
			if strings.HasPrefix(r.rec.ID, "agent-") == sidechains && r.rec.Calls() > 0 {
				out = append(out, r.rec)
			}
		}
	}
	return out
}

// add appends one user or assistant entry to the run.
func (r *ccRun) add(src *source, v rawValue, path string, e *ccEntry, counts *ccCounts) error {
	m := e.Message
	blocks, text, err := anthropic.Content(m.Content)
	if err != nil {
		return src.errAt(v.off, path+".message.content", err.Error(), nil)
	}
	if e.Type == "assistant" {
		if e.IsAPIError || m.Model == "<synthetic>" {
			counts.apiErrors++
			return nil
		}
		return r.addAssistant(v, m, blocks, e.Timestamp)
	}
	r.msgs++
	var texts []string
	if text != "" {
		texts = append(texts, text)
	}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "image":
			r.images++
		case "tool_result":
			r.addResult(v, b, e.ToolUseResult)
		}
	}
	r.addInput(texts)
	return nil
}

// addInput folds the text blocks of one user message into the turns: the
// user's words (joined) are a prompt, the blocks Claude Code adds
// (clientctx.ClaudeCode: a reminder, a slash command's record) its
// context, before or after it as sent.
func (r *ccRun) addInput(texts []string) {
	var words []string
	var after []string
	for _, t := range texts {
		switch {
		case !clientctx.ClaudeCode(t):
			words = append(words, t)
		case len(words) == 0:
			r.fold.input(r.rec, t, true)
		default:
			after = append(after, t)
		}
	}
	if len(words) > 0 {
		r.fold.input(r.rec, strings.Join(words, "\n\n"), false)
	}
	for _, t := range after {
		r.fold.input(r.rec, t, true)
	}
}

func (r *ccRun) addAssistant(v rawValue, m *anthropic.Message, blocks []anthropic.Block, stamp string) error {
	c := r.calls[m.ID]
	if c == nil || m.ID == "" {
		r.msgs++
		t := r.fold.call(r.rec)
		c = &Call{Request: r.msgs - 1, Offset: v.off, Assistant: harness.Message{Role: harness.RoleAssistant}, Time: parseStamp(stamp)}
		t.Calls = append(t.Calls, c)
		if m.ID != "" {
			r.calls[m.ID] = c
		}
	}
	if r.rec.Model == "" {
		r.rec.Model = m.Model
	}
	if m.Usage != nil {
		c.Usage, c.HasUsage = m.Usage.Usage(), true
	}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			c.Assistant.Parts = append(c.Assistant.Parts, harness.TextPart(b.Text))
		case "thinking", "redacted_thinking":
			r.thinking++
		case "tool_use", "server_tool_use":
			args := compactJSON(b.Input)
			c.Assistant.ToolCalls = append(c.Assistant.ToolCalls, harness.ToolCall{ID: b.ID, Name: b.Name, Args: args})
			r.pending[b.ID] = c
		}
	}
	return nil
}

// addResult pairs one tool_result block with the call that asked for it.
func (r *ccRun) addResult(v rawValue, b anthropic.Block, tur json.RawMessage) {
	c, ok := r.pending[b.ToolUseID]
	if !ok {
		r.orphans++
		return
	}
	delete(r.pending, b.ToolUseID)
	parts, err := ccResultParts(b.Content)
	if err != nil {
		parts = []harness.Part{harness.TextPart(string(b.Content))}
	}
	shown := harness.Message{Parts: parts}.Text()
	res := &Result{CallID: b.ToolUseID, Shown: shown, Full: parts, IsError: b.IsError, Offset: v.off}
	if strings.Contains(shown, "<persisted-output>") || strings.HasPrefix(shown, "Output too large") {
		r.agentCut++
		var full struct {
			Stdout string `json:"stdout"`
			Stderr string `json:"stderr"`
		}
		if json.Unmarshal(tur, &full) == nil && len(full.Stdout)+len(full.Stderr) > len(shown) {
			text := full.Stdout
			if full.Stderr != "" {
				text = strings.TrimSuffix(text+"\n"+full.Stderr, "\n")
			}
			res.Full = []harness.Part{harness.TextPart(text)}
			r.fullKept++
		}
	}
	c.addResult(res)
}

// warn sets the run's warnings: what the format leaves out and what this
// run is. sidechains and mains count the file's subagent and main-chain
// recordings.
func (r *ccRun) warn(session string, segments, sidechains, mains int, counts ccCounts, partial bool) {
	rec := r.rec
	id := rec.ID
	rec.ID = session
	if strings.HasPrefix(id, "agent-") || segments > 1 {
		rec.ID = session + "/" + id
	}
	w := []string{notRecorded(formatClaudeCode, true, true)}
	// A subagent's context beside a main chain says nothing of itself:
	// the main chain's warning counts the file's subagents once.
	agent := strings.HasPrefix(id, "agent-")
	switch {
	case agent && mains == 0:
		w = append(w, "a subagent's own context (isSidechain): the file holds no main chain")
	case agent:
	case segments > 1:
		w = append(w, fmt.Sprintf("the session was compacted: this is %s of %d, each after a compaction starting from its summary as Claude Code's requests did", id, segments))
	}
	switch {
	case agent:
	case sidechains == 1:
		w = append(w, "the session's subagent context (isSidechain) is imported as a recording of its own, its ID ending in /agent-…")
	case sidechains > 1:
		w = append(w, fmt.Sprintf("the session's %d subagent contexts (isSidechain) are imported as recordings of their own, their IDs ending in /agent-…", sidechains))
	}
	if o := outputWarning(counts.output); o != "" {
		w = append(w, o)
	}
	if r.agentCut > 0 {
		w = append(w, fmt.Sprintf("%d results were cut by Claude Code itself (\"Output too large\", the rest saved to a file): recorded as the model saw them, the full text only as far as toolUseResult kept it (%d of them, up to 30,000 characters)", r.agentCut, r.fullKept))
	}
	if r.thinking > 0 {
		w = append(w, fmt.Sprintf("%d thinking blocks left out (the API drops earlier turns' thinking from the input)", r.thinking))
	}
	if r.orphans > 0 {
		w = append(w, fmt.Sprintf("%d tool results answer no tool_use recorded in the same context: left out", r.orphans))
	}
	if r.images > 0 {
		w = append(w, fmt.Sprintf("%d images in user messages left out", r.images))
	}
	if counts.apiErrors > 0 {
		w = append(w, fmt.Sprintf("%d synthetic API error messages in the file (isApiErrorMessage) are not model calls: left out", counts.apiErrors))
	}
	if counts.attachments > 0 {
		w = append(w, fmt.Sprintf("%d attachments (hook output, listings, file mentions Claude Code adds to requests) are recorded apart from the messages and not counted", counts.attachments))
	}
	if counts.repeated > 0 {
		w = append(w, fmt.Sprintf("%d entries repeat an earlier file's (same uuids: a resumed or copied session): left out, so each model call counts once; this file's own calls start where it diverges, without the history it shares", counts.repeated))
	}
	if partial {
		w = append(w, incompleteLine("session"))
	}
	rec.Warnings = append(rec.Warnings, w...)
}

// ccResultParts reads a tool_result's content: a string or a list of text
// and image blocks (tool_reference blocks, from tool search, become the
// tool's name).
func ccResultParts(raw json.RawMessage) ([]harness.Part, error) {
	blocks, text, err := anthropic.Content(raw)
	if err != nil {
		return nil, err
	}
	if blocks == nil {
		if text == "" {
			return nil, nil
		}
		return []harness.Part{harness.TextPart(text)}, nil
	}
	var parts []harness.Part
	for _, b := range blocks {
		switch b.Type {
		case "image":
			var data []byte
			mime := "image/*"
			if b.Source != nil {
				mime = b.Source.MediaType
				data, _ = base64.StdEncoding.DecodeString(b.Source.Data)
			}
			parts = append(parts, harness.ImagePart(mime, data))
		case "tool_reference":
			parts = append(parts, harness.TextPart(b.Name+b.ToolName))
		default:
			parts = append(parts, harness.TextPart(b.Text))
		}
	}
	return parts, nil
}

// compactJSON returns raw without insignificant whitespace ({} for none):
// the arguments as the model sent them, whatever the recorder's layout.
func compactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}")
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
