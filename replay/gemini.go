package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/clientctx"
	"github.com/agentharness/harness/internal/wire/gemini"
)

// formatGeminiCLI is a Gemini CLI chat.
const formatGeminiCLI = "gemini-cli"

// gemSessionMessage is one message of a Gemini CLI session file.
type gemSessionMessage struct {
	Type string `json:"type"`
	// Timestamp is when Gemini CLI wrote the message: for a response,
	// when it was answered (Call.Time), which prices an expired cache.
	Timestamp string          `json:"timestamp"`
	Content   json.RawMessage `json:"content"`
	Model     string          `json:"model"`
	ToolCalls []struct {
		ID     string          `json:"id"`
		Name   string          `json:"name"`
		Args   json.RawMessage `json:"args"`
		Result json.RawMessage `json:"result"`
		Status string          `json:"status"`
	} `json:"toolCalls"`
	Tokens *struct {
		Input    int `json:"input"`
		Output   int `json:"output"`
		Cached   int `json:"cached"`
		Thoughts int `json:"thoughts"`
	} `json:"tokens"`
}

// gemBuilder builds a recording from Gemini contents.
type gemBuilder struct {
	src     *source
	rec     *Recording
	pending []*gemPending // calls waiting for their response, in call order
	n       int
	masked  int
	thought int
	unasked int
	// answered holds the ids of the calls a response answered: a session
	// log records each response twice (in its call's toolCalls and in the
	// user message that sent it), and the second is not a new one.
	answered map[string]bool
	fold     turnFold
	// snapshot says the last content was a compression's summary, and
	// acks counts the replies Gemini CLI wrote to one itself.
	snapshot bool
	acks     int
	// notes is the warning for what the format does not record.
	notes string
}

type gemPending struct {
	c        *Call
	id, name string
}

// parseGeminiCLI imports a Gemini CLI chat in any of its shapes: the API's
// Content list ([{role, parts}], as /chat save and checkpoints write it), a
// session file ({sessionId, messages}, as Gemini CLI recorded sessions
// under ~/.gemini/tmp/<project>/chats/session-*.json) or the session log
// that replaced it (session-*.jsonl, Gemini CLI 0.61 checked: see
// sessionLog), and what `gemini -p` prints with --output-format
// stream-json (events: see streamOutput) or json (the answer alone: one
// call; see jsonOutput), each with a warning saying what it does not
// record. A user content's text is a turn's prompt, but the session
// context and the editor's context Gemini CLI sends before a prompt (see
// clientctx.Gemini) are that prompt's context (Turn.Context), each sent as its
// own Content as before. Each model content is one Call; functionCall parts
// are its tool calls, answered by the functionResponse parts that name
// their id (or, without ids, their name in call order). Ids are as the API
// got them: Gemini CLI records a call's id with its tool's name in front
// ("run_shell_command__call_1") and strips it before sending, and so does
// the import. Thought parts are left out. A response is what Gemini CLI
// showed the model: outputs over its limit were cut to 8,000 head and
// 32,000 tail characters with the rest in a file, and older ones masked
// (<tool_output_masked>); a warning counts them. The Content list records
// no usage and no model; a session file records both per message. Neither
// records the system prompt or the tool schemas (see Supply).
func parseGeminiCLI(name string, data []byte) (*Recording, error) {
	src := &source{name: name, data: data}
	b := newGemBuilder(src)
	start := skipSpace(data, 0)
	first, _ := firstRecord(data)
	var err error
	switch {
	case gemIsStream(first):
		err = b.streamOutput(records(src))
	case gemIsOutput(first):
		err = b.jsonOutput()
		b.notes = ""
	case start < int64(len(data)) && data[start] == '[':
		err = b.contents(records(src))
	case gemIsLog(data):
		err = b.sessionLog(records(src))
	default:
		err = b.session()
	}
	if err != nil {
		return nil, err
	}
	return b.finish()
}

// newGemBuilder begins the recording of the Gemini CLI file src.
func newGemBuilder(src *source) *gemBuilder {
	rec := &Recording{Source: src.name, Format: formatGeminiCLI, ID: strings.TrimSuffix(filepath.Base(src.name), filepath.Ext(src.name))}
	return &gemBuilder{src: src, rec: rec, answered: map[string]bool{}, notes: notRecorded(formatGeminiCLI, true, true)}
}

// contents reads a Content list, one element at a time.
func (b *gemBuilder) contents(each recordIter) error {
	_, err := each(func(v rawValue, path string) error {
		var c gemini.Content
		if err := b.src.decodeAt(v, path, &c); err != nil {
			return err
		}
		return b.content(v.off, path, c.Role, c.Parts)
	})
	return err
}

// finish ends the recording: its last turn and the warnings.
func (b *gemBuilder) finish() (*Recording, error) {
	b.fold.end(b.rec)
	if b.rec.Calls() == 0 {
		return nil, b.src.errAt(0, "", "no model content", ErrNoModelCall)
	}
	notes := b.notes
	var w []string
	if notes != "" {
		w = append(w, notes)
	}
	if b.masked > 0 {
		w = append(w, fmt.Sprintf("%d responses were cut by Gemini CLI itself (over its limit: 8,000 head and 32,000 tail characters kept, the rest in a file; or masked): recorded as the model saw them", b.masked))
	}
	if b.unasked > 0 {
		w = append(w, fmt.Sprintf("%d function responses answer no call (the output of commands the user ran): counted as user inputs", b.unasked))
	}
	if b.thought > 0 {
		w = append(w, fmt.Sprintf("%d thought parts left out", b.thought))
	}
	if b.acks > 0 {
		w = append(w, fmt.Sprintf("%d replies Gemini CLI writes itself after a compression's summary (%q) left out: not model calls", b.acks, gemCompressionAck))
	}
	b.rec.Warnings = append(w, b.rec.Warnings...)
	return b.rec, nil
}

// content adds one Content: a user input or function responses, or a
// model response.
func (b *gemBuilder) content(off int64, path, role string, parts []gemini.Part) error {
	b.n++
	snapshot := b.snapshot
	b.snapshot = false
	if role == "model" {
		if snapshot && len(parts) == 1 && parts[0].Text == gemCompressionAck && parts[0].FunctionCall == nil {
			b.acks++ // Gemini CLI's own reply to its summary: no request was made
			return nil
		}
		c := b.call(off)
		for k, p := range parts {
			switch {
			case p.FunctionCall != nil:
				if err := b.toolCall(off, fmt.Sprintf("%s.parts[%d].functionCall", path, k), c, p.FunctionCall.ID, p.FunctionCall.Name, p.FunctionCall.Args); err != nil {
					return err
				}
			case p.Thought:
				b.thought++
			case p.Text != "":
				c.Assistant.Parts = append(c.Assistant.Parts, harness.TextPart(p.Text))
			}
		}
		return nil
	}
	var input []string
	for _, p := range parts {
		switch {
		case p.FunctionResponse != nil:
			fr := p.FunctionResponse
			b.response(off, fr.ID, fr.Name, fr.Response)
		case p.Text != "":
			input = append(input, p.Text)
		}
	}
	if len(input) > 0 {
		text := strings.Join(input, "\n")
		b.snapshot = strings.HasPrefix(strings.TrimLeft(text, " \t\r\n"), clientctx.GeminiSnapshot)
		b.fold.input(b.rec, text, clientctx.Gemini(text))
	}
	return nil
}

// gemCompressionAck is the reply Gemini CLI writes itself after the
// summary of a compressed history (clientctx.GeminiSnapshot), with no model
// call (chatCompressionService).
const gemCompressionAck = "Got it. Thanks for the additional context!"

func (b *gemBuilder) call(off int64) *Call {
	t := b.fold.call(b.rec)
	c := &Call{Request: b.n - 1, Offset: off, Assistant: harness.Message{Role: harness.RoleAssistant}}
	t.Calls = append(t.Calls, c)
	return c
}

func (b *gemBuilder) toolCall(off int64, path string, c *Call, id, name string, args json.RawMessage) error {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if args[0] != '{' {
		return b.src.errAt(off, path+".args", "args is not an object", nil)
	}
	id = gemWireID(name, id)
	if id == "" {
		id = fmt.Sprintf("gem_%d_%d", b.n, len(c.Assistant.ToolCalls)+1)
	}
	c.Assistant.ToolCalls = append(c.Assistant.ToolCalls, harness.ToolCall{ID: id, Name: name, Args: args})
	b.pending = append(b.pending, &gemPending{c: c, id: id, name: name})
	return nil
}

// response pairs a function response with its call: by id, else the
// oldest pending call of that name.
func (b *gemBuilder) response(off int64, id, name string, resp json.RawMessage) {
	id = gemWireID(name, id)
	k := -1
	for i, p := range b.pending {
		if (id != "" && p.id == id) || (k < 0 && id == "" && p.name == name) {
			k = i
			if id != "" {
				break
			}
		}
	}
	if k < 0 && id != "" {
		for i, p := range b.pending { // ids the CLI made up after the call
			if p.name == name && strings.HasPrefix(p.id, "gem_") {
				k = i
				break
			}
		}
	}
	if k < 0 {
		// Gemini CLI records the output of a shell command the user ran
		// (!cmd) as a response no call asked for; the model sees it as
		// input.
		text, _ := gemResponseText(resp)
		b.fold.input(b.rec, text, false)
		b.unasked++
		return
	}
	p := b.pending[k]
	b.pending = append(b.pending[:k], b.pending[k+1:]...)
	b.answered[p.id] = true
	text, isErr := gemResponseText(resp)
	if strings.Contains(text, "<tool_output_masked>") || strings.Contains(text, "Output too large. Showing first") {
		b.masked++
	}
	r := &Result{CallID: p.id, Tool: p.name, Shown: text, IsError: isErr, Offset: off}
	if text != "" {
		r.Full = []harness.Part{harness.TextPart(text)}
	}
	p.c.Results = append(p.c.Results, r)
	p.c.sortResults()
}

// gemResponseText is what a function response shows the model: its
// "output" (or "error") string, or the response object as JSON.
func gemResponseText(resp json.RawMessage) (string, bool) {
	var o map[string]json.RawMessage
	if json.Unmarshal(resp, &o) == nil {
		if s, ok := o["output"]; ok && len(o) == 1 && jsonString(s) != "" {
			return jsonString(s), false
		}
		if s, ok := o["error"]; ok && len(o) == 1 && jsonString(s) != "" {
			return jsonString(s), true
		}
	}
	return string(resp), false
}

// session reads a session file: {sessionId, messages: [{type: user |
// gemini | info | error | warning, content, toolCalls, tokens, model}]}.
func (b *gemBuilder) session() error {
	src := b.src
	fields, err := src.objectFields(0, src.data, "")
	if err != nil {
		return err
	}
	if id, ok := fields["sessionId"]; ok {
		b.rec.ID = jsonString(id.raw)
	}
	msgs, ok := fields["messages"]
	if !ok {
		return src.errAt(0, "", `not a Gemini CLI session: no "messages" field`, nil)
	}
	elems, err := src.arrayElems(msgs.off, msgs.raw, "messages")
	if err != nil {
		return err
	}
	paths := make([]string, len(elems))
	for i := range elems {
		paths[i] = fmt.Sprintf("messages[%d]", i)
	}
	return b.messages(elems, paths)
}

// gemIsLog reports whether data is a session log (JSONL) rather than a
// session file: its first line is a whole JSON value, and either more
// lines follow or it holds no messages (a log that has only begun).
func gemIsLog(data []byte) bool {
	start := skipSpace(data, 0)
	line, rest, _ := bytes.Cut(data[start:], []byte("\n"))
	if !json.Valid(line) {
		return false
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return true
	}
	var f map[string]json.RawMessage
	return json.Unmarshal(line, &f) == nil && !has(f, "messages")
}

// sessionLog reads a session log: the JSONL records Gemini CLI appends
// as a session runs. The first holds the metadata (sessionId,
// projectHash); a record with an id is a message, written again whole
// when it changes (a response, then the same response with its tool
// calls and their results); {"$set": {…}} updates the metadata, and a
// messages list in it replaces every message (Gemini CLI rewrites the
// list when its history changes); {"$rewindTo": id} removes that
// message and those after it. The messages left, in the order first
// written, are the session, as Gemini CLI reads the log when it resumes
// one; a warning counts the model responses a rewind or a rewritten list
// removed.
func (b *gemBuilder) sessionLog(each recordIter) error {
	l := &gemLog{src: b.src, at: map[string]int{}}
	partial, err := each(l.add)
	if err != nil {
		return err
	}
	if l.session != "" {
		b.rec.ID = l.session
	}
	elems := make([]rawValue, len(l.msgs))
	mpaths := make([]string, len(l.msgs))
	for i, m := range l.msgs {
		elems[i], mpaths[i] = m.v, m.path
	}
	if err := b.messages(elems, mpaths); err != nil {
		return err
	}
	if l.dropped > 0 {
		b.rec.Warnings = append(b.rec.Warnings, fmt.Sprintf("%d model responses were removed from the session log by a rewind or a rewritten history: left out, as Gemini CLI leaves them out when it resumes the session", l.dropped))
	}
	if partial {
		b.rec.Warnings = append(b.rec.Warnings, incompleteLine("session"))
	}
	return nil
}

// gemLog folds a session log's records into its messages.
type gemLog struct {
	src     *source
	msgs    []gemLogMessage
	at      map[string]int // message id → index in msgs
	session string
	dropped int // model responses removed by a rewind or a rewritten list
}

// gemLogMessage is a message of a session log: its newest record.
type gemLogMessage struct {
	id, typ string
	v       rawValue
	path    string
}

// add folds one record into the log.
func (l *gemLog) add(v rawValue, path string) error {
	fields, err := l.src.objectFields(v.off, v.raw, path)
	if err != nil {
		return err
	}
	if to, ok := fields["$rewindTo"]; ok && isJSONString(to.raw) {
		l.rewind(jsonString(to.raw))
		return nil
	}
	if id, ok := fields["id"]; ok && isJSONString(id.raw) {
		l.put(jsonString(id.raw), jsonString(fields["type"].raw), v, path)
		return nil
	}
	replace := false
	if set, ok := fields["$set"]; ok && len(set.raw) > 0 && set.raw[0] == '{' {
		sf, err := l.src.objectFields(set.off, set.raw, path+".$set")
		if err != nil {
			return err
		}
		fields, replace, path = sf, true, path+".$set"
	}
	if id, ok := fields["sessionId"]; ok {
		l.session = jsonString(id.raw)
	}
	m, ok := fields["messages"]
	if !ok || len(m.raw) == 0 || m.raw[0] != '[' {
		return nil
	}
	elems, err := l.src.arrayElems(m.off, m.raw, path+".messages")
	if err != nil {
		return err
	}
	old := l.msgs
	if replace {
		l.msgs, l.at = nil, map[string]int{}
	}
	for i, e := range elems {
		var msg struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		}
		if json.Unmarshal(e.raw, &msg) == nil && msg.ID != "" {
			l.put(msg.ID, msg.Type, e, fmt.Sprintf("%s.messages[%d]", path, i))
		}
	}
	if replace {
		for _, o := range old {
			if _, kept := l.at[o.id]; !kept && o.typ == "gemini" {
				l.dropped++
			}
		}
	}
	return nil
}

// put records a message, in place of an earlier record with its id.
func (l *gemLog) put(id, typ string, v rawValue, path string) {
	m := gemLogMessage{id: id, typ: typ, v: v, path: path}
	if i, ok := l.at[id]; ok {
		l.msgs[i] = m
		return
	}
	l.at[id] = len(l.msgs)
	l.msgs = append(l.msgs, m)
}

// rewind removes the message id and those after it; all of them when no
// message has that id, as Gemini CLI does.
func (l *gemLog) rewind(id string) {
	i, ok := l.at[id]
	if !ok {
		i = 0
	}
	l.truncate(i)
}

// truncate keeps the first n messages, counting the model responses it
// removes.
func (l *gemLog) truncate(n int) {
	for _, m := range l.msgs[n:] {
		delete(l.at, m.id)
		if m.typ == "gemini" {
			l.dropped++
		}
	}
	l.msgs = l.msgs[:n]
}

// isJSONString reports whether raw is a JSON string.
func isJSONString(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '"' }

// gemWireID is a call id as Gemini CLI sends it to the API: without the
// "<tool name>__" it records in front.
func gemWireID(name, id string) string {
	name = strings.TrimSpace(name)
	if name == "" {
		name = "generic_tool"
	}
	return strings.TrimPrefix(id, name+"__")
}

// messages imports a session's messages (user | gemini | info | error |
// warning, with content, toolCalls, tokens and model), paths naming
// each for errors.
func (b *gemBuilder) messages(elems []rawValue, paths []string) error {
	for i, v := range elems {
		path := paths[i]
		var m gemSessionMessage
		if err := b.src.decodeAt(v, path, &m); err != nil {
			return err
		}
		text := gemText(m.Content)
		switch m.Type {
		case "user":
			b.n++
			if b.userResponses(v.off, m.Content) && text == "" {
				continue // only the responses to the last call's tools
			}
			b.fold.input(b.rec, text, clientctx.Gemini(text))
		case "gemini":
			b.n++
			c := b.call(v.off)
			c.Time = parseStamp(m.Timestamp)
			if text != "" {
				c.Assistant.Parts = []harness.Part{harness.TextPart(text)}
			}
			if b.rec.Model == "" {
				b.rec.Model = m.Model
			}
			if t := m.Tokens; t != nil {
				c.Usage, c.HasUsage = harness.Usage{Input: t.Input, Cached: t.Cached, Output: t.Output + t.Thoughts}, true
			}
			for k, tc := range m.ToolCalls {
				tpath := fmt.Sprintf("%s.toolCalls[%d]", path, k)
				if err := b.toolCall(v.off, tpath, c, tc.ID, tc.Name, tc.Args); err != nil {
					return err
				}
				if err := b.sessionResult(v.off, tpath, c.Assistant.ToolCalls[len(c.Assistant.ToolCalls)-1].ID, tc.Name, tc.Result); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// userResponses answers calls with the functionResponse parts of a user
// message (a session log records them so, beside the calls' results),
// leaving out those a call's result already gave; it reports whether
// the content held any.
func (b *gemBuilder) userResponses(off int64, content json.RawMessage) bool {
	var parts []gemini.Part
	if json.Unmarshal(content, &parts) != nil {
		return false
	}
	found := false
	for _, p := range parts {
		fr := p.FunctionResponse
		if fr == nil {
			continue
		}
		found = true
		if id := gemWireID(fr.Name, fr.ID); id == "" || !b.answered[id] {
			b.response(off, fr.ID, fr.Name, fr.Response)
		}
	}
	return found
}

// sessionResult answers a session file's tool call with the
// functionResponse parts its result holds.
func (b *gemBuilder) sessionResult(off int64, path, id, name string, result json.RawMessage) error {
	var parts []gemini.Part
	if len(result) == 0 || string(result) == "null" || json.Unmarshal(result, &parts) != nil {
		return nil // not run (cancelled): no result
	}
	for _, p := range parts {
		if p.FunctionResponse != nil {
			b.response(off, id, name, p.FunctionResponse.Response)
			return nil
		}
	}
	return nil
}

// gemText reads a session message's content: a string or a list of parts.
func gemText(raw json.RawMessage) string {
	if s := jsonString(raw); s != "" {
		return s
	}
	var parts []gemini.Part
	_ = json.Unmarshal(raw, &parts)
	var out []string
	for _, p := range parts {
		if p.Text != "" && !p.Thought {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}
