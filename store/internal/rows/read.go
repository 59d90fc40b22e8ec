package rows

import (
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/codec"
)

// The columns each reader scans, in order. Columns with a table prefix
// assume the aliases a store's query gives them (named with the reader).

// TurnColumns are a turns row's, for ScanTurn.
const TurnColumns = "idx, input, outcome, started_ns, ended_ns, input_tokens, cached_tokens, cache_write_tokens, output_tokens"

// RoundColumns are a round's (rounds r) with its assistant message
// (messages m, LEFT JOINed: a round without one reads an empty message),
// for ScanRound.
const RoundColumns = `r.turn, r.idx, r.final, r.input_tokens, r.cached_tokens, r.cache_write_tokens, r.output_tokens,
	r.req_messages, r.req_evidence_chars, r.req_tools, r.req_tool_bytes, r.answered_ns,
	m.role, m.parts, m.tool_call_id, m.tool_name, COALESCE(m.is_error, false)`

// CallColumns are a tool_calls row's, for ScanCall.
const CallColumns = "turn, round, dropped, call_id, name, args"

// ResultColumns are a results row's (results r) before its payload's,
// for ScanResult, which then reads the body's text, parts and structured
// columns (each a store selects its own way: NULL when not read).
const ResultColumns = "r.turn, r.round, r.seq, r.call_id, r.tool, r.is_error, r.timed_out, r.bytes, r.model_text, r.model, r.meta"

// CutColumns are a stored cut's, for Cut (after any key columns).
const CutColumns = "kind, by, bytes_in, bytes_out, locator, of, refs"

// ContextColumns are a turn_context row's, for ScanContext.
const ContextColumns = "turn, after_input, text"

// NoteColumns are a notes row's, for ScanNote.
const NoteColumns = "after, text, by, clear_turn, clear_round"

// CallRecordColumns are a result's (results r) figures with its call's
// arguments (tool_calls c, LEFT JOINed), for Calls.ScanRecord.
const CallRecordColumns = `r.turn, r.round, r.seq, r.call_id, r.tool, c.args, r.is_error, r.timed_out, r.bytes, r.full_chars,
	r.model_bytes, r.model_chars, r.marker`

// ViewCutColumns are a view_cuts row's, for Calls.ScanView.
const ViewCutColumns = "turn, request, call_id, kind, by, bytes_in, bytes_out, size_in, size_out, unit, locator, marker"

// RequestColumns are a round's request (rounds r) with its system prompt
// (system_prompts p, LEFT JOINed), for Requests.ScanRound.
const RequestColumns = "r.turn, r.idx, r.final, r.req_recorded, r.req_system, r.req_tool_set, p.text, p.bytes"

// MemberColumns are a member of a tool list (tool_sets t,
// tool_set_members m, tool_schemas s), for Requests.ScanMember.
const MemberColumns = "t.hash, t.tools, t.bytes, m.pos, s.name, s.description, s.input_schema, s.risk"

// ListSQL selects every conversation's summary, most recently updated
// first, from counts and sums (never a payload), for ScanSummary.
const ListSQL = `SELECT c.id, c.title, c.created_ns, c.updated_ns,
	(SELECT COUNT(*) FROM turns t WHERE t.conv_id = c.id),
	(SELECT COUNT(*) FROM notes n WHERE n.conv_id = c.id),
	COALESCE(ro.n, 0), COALESCE(ro.input, 0), COALESCE(ro.cached, 0), COALESCE(ro.cache_write, 0), COALESCE(ro.output, 0),
	COALESCE(re.n, 0), COALESCE(re.bytes, 0), COALESCE(re.model_bytes, 0)
FROM conversations c
LEFT JOIN (SELECT conv_id, COUNT(*) AS n, SUM(input_tokens) AS input, SUM(cached_tokens) AS cached,
		SUM(cache_write_tokens) AS cache_write, SUM(output_tokens) AS output
	FROM rounds GROUP BY conv_id) ro ON ro.conv_id = c.id
LEFT JOIN (SELECT conv_id, COUNT(*) AS n, SUM(bytes) AS bytes, SUM(model_bytes) AS model_bytes
	FROM results GROUP BY conv_id) re ON re.conv_id = c.id
ORDER BY c.updated_ns DESC, c.id`

// ScanTurn reads TurnColumns and adds the turn.
func (l *Loader) ScanTurn(sc Scanner) error {
	t := &harness.Turn{}
	var started, ended int64
	if err := sc.Scan(&t.Index, Str{&t.Input}, Str{(*string)(&t.Outcome)}, &started, &ended,
		&t.Usage.Input, &t.Usage.Cached, &t.Usage.CacheWrite, &t.Usage.Output); err != nil {
		return err
	}
	t.Started, t.Ended = codec.FromNS(started), codec.FromNS(ended)
	l.Turn(t)
	return nil
}

// ScanRound reads RoundColumns and adds the round to its turn.
func (l *Loader) ScanRound(sc Scanner) error {
	var (
		turn     int
		r        = &harness.Round{}
		m        = &r.Assistant
		parts    []byte
		answered int64
	)
	if err := sc.Scan(&turn, &r.Index, &r.Final, &r.Usage.Input, &r.Usage.Cached, &r.Usage.CacheWrite, &r.Usage.Output,
		&r.Stats.Messages, &r.Stats.EvidenceChars, &r.Stats.Tools, &r.Stats.ToolBytes, &answered,
		Str{(*string)(&m.Role)}, &parts, Str{&m.ToolCallID}, Str{&m.ToolName}, &m.IsError); err != nil {
		return err
	}
	r.Answered = codec.FromNS(answered)
	var err error
	if m.Parts, err = codec.DecodeParts("", false, parts); err != nil {
		return fmt.Errorf("turn %d round %d: assistant message: %w", turn, r.Index, err)
	}
	return l.Round(turn, r)
}

// ScanCall reads CallColumns and adds the call to its round.
func (l *Loader) ScanCall(sc Scanner) error {
	var (
		turn, round int
		dropped     bool
		c           harness.ToolCall
		args        []byte
	)
	if err := sc.Scan(&turn, &round, &dropped, Str{&c.ID}, Str{&c.Name}, &args); err != nil {
		return err
	}
	if args != nil {
		c.Args = json.RawMessage(args)
	}
	return l.Call(turn, round, dropped, c)
}

// ScanResult reads a result as the function ScanResult does (extra are
// the store's own columns after the body's) and adds it to its round.
func (l *Loader) ScanResult(sc Scanner, extra ...any) (Key, *harness.ToolResult, error) {
	k, res, err := ScanResult(sc, extra...)
	if err != nil {
		return k, nil, err
	}
	return k, res, l.Result(k.Turn, k.Round, k.Seq, res)
}

// ScanCut reads turn, round, seq and CutColumns and adds the cut to its
// result.
func (l *Loader) ScanCut(sc Scanner) error {
	var k Key
	c, err := Cut(sc, &k.Turn, &k.Round, &k.Seq)
	if err != nil {
		return fmt.Errorf("result %d.%d.%d: %w", k.Turn, k.Round, k.Seq, err)
	}
	return l.Cut(k.Turn, k.Round, k.Seq, c)
}

// ScanContext reads ContextColumns and adds the context message to its
// turn, after the ones read before it.
func (l *Loader) ScanContext(sc Scanner) error {
	var (
		turn int
		cm   harness.ContextMessage
	)
	if err := sc.Scan(&turn, &cm.AfterInput, Str{&cm.Text}); err != nil {
		return err
	}
	return l.Context(turn, cm)
}

// ScanNote reads NoteColumns and adds the note.
func (l *Loader) ScanNote(sc Scanner) error {
	n := &harness.Note{}
	if err := sc.Scan(&n.After, Str{&n.Text}, Str{&n.By}, &n.ClearTurn, &n.ClearRound); err != nil {
		return err
	}
	l.Conv.Notes = append(l.Conv.Notes, n)
	return nil
}

// ScanResult reads ResultColumns, the body's text, parts and structured
// columns, then extra (a store's own columns), into a result. A payload
// whose columns are NULL (not selected, or kept elsewhere) is left nil;
// Partial says so.
func ScanResult(sc Scanner, extra ...any) (Key, *harness.ToolResult, error) {
	var (
		k   Key
		row codec.ResultRow
	)
	dest := []any{&k.Turn, &k.Round, &k.Seq, Str{&row.CallID}, Str{&row.Tool}, &row.IsError, &row.TimedOut, &row.Bytes,
		NullStr{&row.ModelText, &row.ModelIsText}, &row.ModelJSON, &row.Meta,
		NullStr{&row.Text, &row.TextIsText}, &row.PartsJSON, &row.Structured}
	if err := sc.Scan(append(dest, extra...)...); err != nil {
		return k, nil, err
	}
	res, err := row.Decode()
	return k, res, err
}

// Cut reads keys (the columns before) and CutColumns into a cut.
func Cut(sc Scanner, keys ...any) (harness.Cut, error) {
	var (
		c     harness.Cut
		refs  string
		valid bool
	)
	if err := sc.Scan(append(keys, Str{(*string)(&c.Kind)}, Str{&c.By}, &c.BytesIn, &c.BytesOut,
		Str{&c.Locator}, Str{&c.Of}, NullStr{&refs, &valid})...); err != nil {
		return c, err
	}
	var err error
	c.Refs, err = codec.DecodeRefs(refs, valid)
	return c, err
}

// ScanRecord reads CallRecordColumns and adds the record.
func (c *Calls) ScanRecord(sc Scanner) error {
	var (
		rec  store.CallRecord
		args []byte
	)
	if err := sc.Scan(&rec.Turn, &rec.Round, &rec.Seq, Str{&rec.CallID}, Str{&rec.Tool}, &args, &rec.IsError, &rec.TimedOut,
		&rec.FullBytes, &rec.FullChars, &rec.ModelBytes, &rec.ModelChars, Str{&rec.Marker}); err != nil {
		return err
	}
	if args != nil {
		rec.Args = json.RawMessage(args)
	}
	c.Add(rec)
	return nil
}

// ScanCut reads turn, round, seq and CutColumns and adds the cut to its
// record.
func (c *Calls) ScanCut(sc Scanner) error {
	var k Key
	cut, err := Cut(sc, &k.Turn, &k.Round, &k.Seq)
	if err != nil {
		return fmt.Errorf("result %d.%d.%d: %w", k.Turn, k.Round, k.Seq, err)
	}
	c.Cut(k.Turn, k.Round, k.Seq, cut)
	return nil
}

// ScanView reads ViewCutColumns and adds the view cut.
func (c *Calls) ScanView(sc Scanner) error {
	var (
		v      store.ViewCut
		callID string
	)
	if err := sc.Scan(&v.Turn, &v.Request, Str{&callID}, Str{(*string)(&v.Kind)}, Str{&v.By}, &v.BytesIn, &v.BytesOut,
		&v.SizeIn, &v.SizeOut, Str{&v.Unit}, Str{&v.Locator}, Str{&v.Marker}); err != nil {
		return err
	}
	c.View(callID, v)
	return nil
}

// ScanRound reads RequestColumns and adds the round's request.
func (r *Requests) ScanRound(sc Scanner) error {
	var (
		q       store.Request
		sysHash string
		found   bool
		bytes   sql.NullInt64
	)
	if err := sc.Scan(&q.Turn, &q.Round, &q.Final, &q.Recorded, &sysHash, &q.ToolSet, NullStr{&q.System, &found}, &bytes); err != nil {
		return err
	}
	q.SystemBytes = int(bytes.Int64)
	return r.Round(q, sysHash, found)
}

// ScanMember reads MemberColumns and adds the member to its list.
func (r *Requests) ScanMember(sc Scanner) error {
	var (
		h                 string
		tools, bytes, pos int
		spec              harness.ToolSpec
		schema            []byte
		risk              int64
	)
	if err := sc.Scan(&h, &tools, &bytes, &pos, Str{&spec.Name}, Str{&spec.Description}, &schema, &risk); err != nil {
		return err
	}
	if len(schema) > 0 {
		spec.InputSchema = json.RawMessage(schema)
	}
	return r.Member(h, tools, bytes, pos, spec, risk)
}

// ScanSummary reads a row of ListSQL.
func ScanSummary(sc Scanner) (store.Summary, error) {
	var (
		sm               store.Summary
		created, updated int64
	)
	if err := sc.Scan(Str{&sm.ID}, Str{&sm.Title}, &created, &updated, &sm.Turns, &sm.Notes,
		&sm.Rounds, &sm.Usage.Input, &sm.Usage.Cached, &sm.Usage.CacheWrite, &sm.Usage.Output,
		&sm.Calls, &sm.ResultBytes, &sm.ModelBytes); err != nil {
		return sm, err
	}
	sm.Created, sm.Updated = codec.FromNS(created), codec.FromNS(updated)
	return sm, nil
}

// ScanEvent reads an events row's body.
func ScanEvent(sc Scanner) (harness.Event, error) {
	var (
		body []byte
		e    harness.Event
	)
	if err := sc.Scan(&body); err != nil {
		return e, err
	}
	err := json.Unmarshal(body, &e)
	return e, err
}

// Payloads says which result payloads a load reads.
type Payloads int

const (
	// PayloadsModel reads a payload only when it is the model's copy
	// (store.Store.Load).
	PayloadsModel Payloads = iota
	// PayloadsAll reads every payload (store.Store.LoadFull).
	PayloadsAll
	// PayloadsNone reads none (store.DB.LoadOutline).
	PayloadsNone
)
