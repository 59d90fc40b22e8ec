package replay

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/spill"
	"github.com/agentharness/harness/store/sqlite"
)

// sqliteMagic opens every SQLite 3 database file.
const sqliteMagic = "SQLite format 3\x00"

// IsStore reports whether the file at path is an SQLite database (the
// format of harness's transcript store); it reads the first 16 bytes.
func IsStore(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [len(sqliteMagic)]byte
	_, err = io.ReadFull(f, head[:])
	return err == nil && string(head[:]) == sqliteMagic
}

// ParseStore imports every conversation of harness's transcript store, the
// SQLite file store/sqlite writes (by default <workspace>/.harness/
// harness.db), most recently updated first. Each conversation becomes one
// Recording whose Source is "path#id": its model calls are the stored
// rounds with the usage the provider reported, and each result's full
// payload is the stored one (LoadFull). A result whose output streamed
// into a spill file keeps only its model copy in the store; its full
// payload is read back from the spill file when the store sits in its
// workspace's .harness folder, and is otherwise the stored copy.
//
// The store does not keep the system prompt or the tool schemas of a run
// (only how many schemas each request carried and their bytes), so the
// recordings have neither: every preset is replayed without them, which
// leaves ratios between presets comparable but counts fewer input tokens
// than the run paid.
//
// The file is checked read-only first: a database that is not a harness
// store is refused with ErrNotTranscript and left untouched. A store
// written by an older harness is migrated by opening it, as every harness
// command that opens it does.
func ParseStore(ctx context.Context, path string) ([]*Recording, error) {
	if !IsStore(path) {
		return nil, fmt.Errorf("%s: %w (not an SQLite database)", path, ErrNotTranscript)
	}
	if err := checkStore(ctx, path); err != nil {
		return nil, err
	}
	st, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer st.Close()
	sums, err := st.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("replay: %s: %w", path, err)
	}
	ws := storeWorkspace(path)
	var recs []*Recording
	for _, sm := range sums {
		conv, err := st.LoadFull(ctx, sm.ID)
		if err != nil {
			return nil, fmt.Errorf("replay: %s: %w", path, err)
		}
		rec, err := FromConversation(path+"#"+conv.ID, conv, ws)
		if err != nil {
			return nil, err
		}
		rec.Format = FormatStore
		recs = append(recs, rec)
	}
	return recs, nil
}

// checkStore opens path read-only and checks it holds harness's tables, so
// that sqlite.Open never migrates (writes to) somebody else's database.
func checkStore(ctx context.Context, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: "mode=ro&_query_only=1"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return fmt.Errorf("replay: %s: %w", path, err)
	}
	defer db.Close()
	var n int
	err = db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'
	AND name IN ('schema_migrations', 'conversations', 'turns', 'rounds', 'results', 'result_bodies')`).Scan(&n)
	if err != nil {
		return fmt.Errorf("replay: %s: reading the database: %w", path, err)
	}
	if n != 6 {
		return fmt.Errorf("%s: %w (an SQLite database without harness's transcript tables)", path, ErrNotTranscript)
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

// FromConversation turns a harness conversation (as an agent left it, or
// as a store loads it with every payload) into a Recording named source.
// Each round is one model call with its reported usage; each result's full
// payload is ToolResult.Parts and Structured and what was shown its model
// copy. A result whose full record is a spill file (a streamed output,
// Meta["spill_path"]) is read back from that file under workspace when
// workspace is not "" and the file is there.
func FromConversation(source string, conv *harness.Conversation, workspace string) (*Recording, error) {
	if conv == nil {
		return nil, fmt.Errorf("replay: %s: no conversation", source)
	}
	rec := &Recording{Source: source, Format: FormatConversation, ID: conv.ID}
	if rec.ID == "" {
		rec.ID = source
	}
	request := 0
	for ti, turn := range conv.Turns {
		if turn == nil {
			return nil, fmt.Errorf("replay: %s: turn %d is missing", source, ti+1)
		}
		t := &Turn{Input: turn.Input}
		request++ // the user input
		rec.Turns = append(rec.Turns, t)
		for ri, r := range turn.Rounds {
			if r == nil {
				return nil, fmt.Errorf("replay: %s: turn %d round %d is missing", source, ti+1, ri+1)
			}
			c := &Call{Request: request, Assistant: r.Assistant, Usage: r.Usage, Final: r.Final}
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
// store that holds more than one conversation (use ParseStore or Load).
var ErrManyConversations = errors.New("the transcript store holds more than one conversation")
