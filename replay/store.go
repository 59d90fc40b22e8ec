package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/spill"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/sqlite"
)

// sqliteMagic opens every SQLite 3 database file.
const sqliteMagic = "SQLite format 3\x00"

// isStore reports whether the file at path is an SQLite database (the
// format of harness's transcript store); it reads the first 16 bytes.
func isStore(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [len(sqliteMagic)]byte
	_, err = io.ReadFull(f, head[:])
	return err == nil && string(head[:]) == sqliteMagic
}

// parseStore imports every conversation of harness's transcript store, the
// SQLite file store/sqlite writes (by default <workspace>/.harness/
// harness.db), most recently updated first. Each conversation becomes one
// Recording whose Source is "path#id": its model calls are the stored
// rounds with the usage the provider reported and the times their
// responses arrived (see fromConversation), and each result's full
// payload is the stored one (LoadFull). A result whose output streamed
// into a spill file keeps only its model copy in the store; its full
// payload is read back from the spill file when the store sits in its
// workspace's .harness folder, and is otherwise the stored copy.
//
// The store keeps the system prompt and the tool schemas of every request
// (store.Request), and the recording gets them: System is the run's system
// prompt, each call's Tools the schemas its request sent (an empty list
// for a synthesis call that sent none), and Recording.Tools their union,
// with their risk, in the order first offered. A replay without a tool
// selector thus offers every call exactly what the run offered, however
// the lists changed between rounds (a per-turn selection, a view policy);
// a replay with one picks from the union (see Config.Selector). A
// conversation stored before the store recorded requests (schema version
// 4) has neither; its replays count fewer input tokens than the run paid.
// What a replay cannot count as the run did is in Recording.Warnings (and
// parseStoreWarn).
//
// The file is checked read-only first: a database that is not a harness
// store is refused with ErrNotTranscript and left untouched. A store
// written by an older harness is migrated by opening it, as every harness
// command that opens it does.
func parseStore(ctx context.Context, path string) ([]*Recording, error) {
	recs, _, err := parseStoreWarn(ctx, path)
	return recs, err
}

// storeWarning is a caveat about a conversation imported from a transcript
// store: what its replays cannot count as the run did.
type storeWarning struct {
	// Source is the recording's Source ("path#id").
	Source string `json:"source"`
	Text   string `json:"text"`
}

// String is "source: text".
func (w storeWarning) String() string { return w.Source + ": " + w.Text }

// PredatesRequests is the text of the warning for a conversation whose
// requests the store does not hold.
const PredatesRequests = "the store predates request recording: figures exclude the system prompt and the tool schemas"

// parseStoreWarn is parseStore that also returns the warnings of the
// import (each recording's Warnings, with its source), one or more per
// conversation that replays cannot count exactly: stored before request
// recording ([PredatesRequests]), partly so (a conversation resumed after
// the upgrade; its older rounds get the union of the tool lists recorded
// later), whose requests sent more than one system prompt (a Recording
// holds one), or that offered one tool with two schemas (a selector, and
// rounds without a recorded request, get the first).
func parseStoreWarn(ctx context.Context, path string) ([]*Recording, []storeWarning, error) {
	if !isStore(path) {
		return nil, nil, fmt.Errorf("%s: %w (not an SQLite database)", path, ErrNotTranscript)
	}
	if err := checkStore(ctx, path); err != nil {
		return nil, nil, err
	}
	st, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("replay: %w", err)
	}
	defer st.Close()
	return readStore(ctx, st, path, storeWorkspace(path))
}

// ReadStore imports every conversation of an open transcript store, as
// Load does a store's file: each Recording's Source is "source#id", its
// Warnings say what its replays cannot count as the run did, and a
// streamed result's full payload is read back from its spill file under
// workspace (when not "").
func ReadStore(ctx context.Context, st store.Store, source, workspace string) ([]*Recording, error) {
	recs, _, err := readStore(ctx, st, source, workspace)
	return recs, err
}

// readStore is ReadStore that also returns the recordings' warnings, each
// with its source.
func readStore(ctx context.Context, st store.Store, source, workspace string) ([]*Recording, []storeWarning, error) {
	sums, err := st.List(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("replay: %s: %w", source, err)
	}
	models, err := storeModels(ctx, st)
	if err != nil {
		return nil, nil, fmt.Errorf("replay: %s: %w", source, err)
	}
	var (
		recs  []*Recording
		warns []storeWarning
	)
	for _, sm := range sums {
		conv, err := st.LoadFull(ctx, sm.ID)
		if err != nil {
			return nil, nil, fmt.Errorf("replay: %s: %w", source, err)
		}
		reqs, err := st.Requests(ctx, sm.ID, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("replay: %s: %w", source, err)
		}
		rec, err := fromConversation(source+"#"+conv.ID, conv, workspace)
		if err != nil {
			return nil, nil, err
		}
		rec.Format = formatStore
		rec.Model = models[conv.ID]
		rec.Warnings = applyRequests(rec, conv, reqs)
		for _, text := range rec.Warnings {
			warns = append(warns, storeWarning{Source: rec.Source, Text: text})
		}
		recs = append(recs, rec)
	}
	return recs, warns, nil
}

// storeModels maps each conversation to the model its last call named,
// as the proxy logs it with the call's saving (the transcript does not
// keep it); nil when the store keeps no savings log.
func storeModels(ctx context.Context, st store.Store) (map[string]string, error) {
	log, ok := st.(store.SavingsLog)
	if !ok {
		return nil, nil
	}
	rows, err := log.Savings(ctx, time.Time{})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, r := range rows {
		if r.Model != "" {
			out[r.Conversation] = r.Model
		}
	}
	return out, nil
}

// applyRequests sets rec.System, rec.Tools and each call's Tools from the
// stored requests of conv (rec was made from conv by fromConversation, one
// call per round) and returns what the recording cannot hold: the system
// prompt of the first recorded request stands for every call, and
// rec.Tools is the union of every request's list, the first schema of a
// name winning, which only rounds without a recorded request and replays
// with a selector use.
func applyRequests(rec *Recording, conv *harness.Conversation, reqs []store.Request) []string {
	var (
		warns              []string
		unrecorded, rounds int
		firstSystem        *store.Request
		byName             = map[string]harness.ToolSpec{}
		lists              = map[string]bool{}
		systemChanged      string
		schemaChanged      []string
		calls              = map[[2]int]*Call{}
	)
	for ti, t := range conv.Turns {
		for ri, r := range t.Rounds {
			calls[[2]int{t.Index, r.Index}] = rec.Turns[ti].Calls[ri]
		}
	}
	for i := range reqs {
		q := &reqs[i]
		rounds++
		if !q.Recorded {
			unrecorded++
			continue
		}
		if c := calls[[2]int{q.Turn, q.Round}]; c != nil {
			// Requests that sent one list share its slice; a request that
			// sent none (a synthesis call) gets an empty one, not nil.
			c.Tools = q.Tools
			if c.Tools == nil {
				c.Tools = []harness.ToolSpec{}
			}
		}
		if firstSystem == nil {
			firstSystem = q
			rec.System = q.System
		} else if q.System != firstSystem.System && systemChanged == "" {
			systemChanged = fmt.Sprintf("turn %d round %d", q.Turn, q.Round)
		}
		if !q.Final {
			lists[q.ToolSet] = true
		}
		for _, t := range q.Tools {
			prev, seen := byName[t.Name]
			if !seen {
				byName[t.Name] = t
				rec.Tools = append(rec.Tools, t)
				continue
			}
			if !sameSpec(prev, t) && !slices.Contains(schemaChanged, t.Name) {
				schemaChanged = append(schemaChanged, t.Name)
			}
		}
	}
	switch {
	case rounds == 0:
	case unrecorded == rounds:
		warns = append(warns, PredatesRequests)
	case unrecorded > 0:
		n := fmt.Sprintf("%d tools", len(rec.Tools))
		if len(rec.Tools) == 1 {
			n = "1 tool"
		}
		tools := fmt.Sprintf("the tool list recorded later (%s)", n)
		if len(lists) > 1 {
			tools = fmt.Sprintf("the union of the %d tool lists recorded later (%s)", len(lists), n)
		}
		warns = append(warns, fmt.Sprintf("%d of %d rounds were stored before request recording: the replay gives them the system prompt and %s", unrecorded, rounds, tools))
	}
	if systemChanged != "" {
		warns = append(warns, fmt.Sprintf("the system prompt changed at %s: the replay sends the first one (%d bytes) in every call", systemChanged, len(rec.System)))
	}
	// Different tool lists need no warning: every recorded call replays
	// with its own. One tool with two schemas does, for the union.
	if len(schemaChanged) > 0 {
		warns = append(warns, fmt.Sprintf("tools offered with two different schemas (each recorded call replays with its own; a tool selector and rounds without a recorded request use the first): %s", strings.Join(schemaChanged, ", ")))
	}
	return warns
}

func sameSpec(a, b harness.ToolSpec) bool {
	return a.Name == b.Name && a.Description == b.Description && string(a.InputSchema) == string(b.InputSchema) && a.Risk == b.Risk
}

// checkStore opens path read-only and checks it holds harness's tables, so
// that sqlite.Open never migrates (writes to) somebody else's database.
func checkStore(ctx context.Context, path string) error {
	db, err := openReadOnly(path)
	if err != nil {
		return err
	}
	defer db.Close()
	var n int
	err = db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'
	AND name IN ('schema_migrations', 'conversations', 'turns', 'rounds', 'results', 'result_bodies')`).Scan(&n)
	if err != nil {
		return fmt.Errorf("replay: %s: reading the database: %w", path, err)
	}
	if n != 6 {
		return fmt.Errorf("%s: %w (an SQLite database without harness's transcript tables, nor opencode's)", path, ErrNotTranscript)
	}
	return nil
}

// storeWorkspace is the workspace of a store kept at its default place
// (<workspace>/.harness/<file>), or "".
func storeWorkspace(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	dir := filepath.Dir(abs)
	if filepath.Base(dir) != filepath.Dir(spill.Folder) {
		return ""
	}
	return filepath.Dir(dir)
}

// fromConversation turns a harness conversation (as an agent left it, or
// as a store loads it with every payload) into a Recording named source.
// A turn keeps its context messages (Turn.Context: the proxy stores a
// client's), so a replay sends them where the client did. Each round is
// one model call with its reported usage and the time its response arrived
// (Round.Answered, as Call.Time: zero for rounds stored before harness
// recorded it), so IdleGaps and a bench that lets the prompt cache expire
// see the run's pauses; each result's full payload is ToolResult.Parts and
// Structured and what was shown its model copy. A result whose full record
// is a spill file (a streamed output, Meta["spill_path"]) is read back
// from that file under workspace when workspace is not "" and the file is
// there.
func fromConversation(source string, conv *harness.Conversation, workspace string) (*Recording, error) {
	if conv == nil {
		return nil, fmt.Errorf("replay: %s: no conversation", source)
	}
	rec := &Recording{Source: source, Format: formatConversation, ID: conv.ID}
	if rec.ID == "" {
		rec.ID = source
	}
	request := 0
	for ti, turn := range conv.Turns {
		if turn == nil {
			return nil, fmt.Errorf("replay: %s: turn %d is missing", source, ti+1)
		}
		t := &Turn{Input: turn.Input, Context: slices.Clone(turn.Context)}
		request += 1 + len(t.Context) // the user input and its context messages (the proxy stores a client's)
		rec.Turns = append(rec.Turns, t)
		for ri, r := range turn.Rounds {
			if r == nil {
				return nil, fmt.Errorf("replay: %s: turn %d round %d is missing", source, ti+1, ri+1)
			}
			c := &Call{Request: request, Assistant: r.Assistant, Usage: r.Usage, Final: r.Final, Time: r.Answered}
			c.Assistant.Role = harness.RoleAssistant
			c.Assistant.ToolCalls = append([]harness.ToolCall(nil), r.Assistant.ToolCalls...)
			c.HasUsage = r.Usage != (harness.Usage{})
			request++
			ids := map[string]bool{}
			for _, tc := range r.Assistant.ToolCalls {
				ids[tc.ID] = true
			}
			for k, res := range r.Results {
				switch {
				case res == nil:
					return nil, fmt.Errorf("replay: %s: turn %d round %d: result %d is missing", source, ti+1, ri+1, k+1)
				case !ids[res.CallID]:
					return nil, fmt.Errorf("replay: %s: turn %d round %d: result for %q, which the round's assistant message did not call", source, ti+1, ri+1, res.CallID)
				case res.Partial:
					return nil, fmt.Errorf("replay: %s: turn %d round %d: result %s was loaded without its payload (load the conversation in full)", source, ti+1, ri+1, res.CallID)
				}
				delete(ids, res.CallID)
				full := res.Parts
				if text, ok := spilledStream(res, workspace); ok {
					full = []harness.Part{harness.TextPart(text)}
				}
				c.Results = append(c.Results, &Result{
					CallID: res.CallID, Tool: res.Tool, Full: full, Structured: res.Structured,
					Shown: res.ModelText(), IsError: res.IsError,
				})
				request++
			}
			t.Calls = append(t.Calls, c)
		}
	}
	return rec, nil
}

// spilledStream reads the spill file that is the full record of a streamed
// result, when it lies inside workspace.
func spilledStream(res *harness.ToolResult, workspace string) (string, bool) {
	loc, _ := res.Meta["spill_path"].(string)
	if loc == "" || workspace == "" || filepath.IsAbs(loc) {
		return "", false
	}
	p := filepath.Join(workspace, filepath.FromSlash(loc))
	if rel, err := filepath.Rel(workspace, p); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// ErrManyConversations is wrapped by ParseFile's error for a transcript
// store that holds more than one conversation (use parseStore or Load).
var ErrManyConversations = errors.New("the transcript store holds more than one conversation")
