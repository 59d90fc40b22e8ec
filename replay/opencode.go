package replay

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// formatOpencode is an opencode session, read from the SQLite database
// opencode keeps its history in.
const formatOpencode = "opencode"

// ocRow is one row of opencode's message or part table: its id, the
// message it belongs to (for a part), when opencode wrote it (Unix
// milliseconds) and its JSON.
type ocRow struct {
	ID, Message string
	Created     int64
	Data        string
}

// ocSession is one row of opencode's session table.
type ocSession struct {
	ID, Parent, Title, Version string
}

// ocTables are the tables (and columns) the import reads: opencode
// 1.18's schema, which keeps a message's and a part's content as JSON.
var ocTables = map[string][]string{
	"session": {"id", "parent_id", "title", "version", "time_created"},
	"message": {"id", "session_id", "time_created", "data"},
	"part":    {"id", "message_id", "session_id", "time_created", "data"},
}

// errNotOpencode is wrapped by the error for an SQLite database that does
// not have opencode's session, message and part tables.
var errNotOpencode = errors.New("not an opencode database")

// openReadOnly opens the SQLite database at path without writing to it
// (the import never changes a database a client may still be using).
func openReadOnly(path string) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: "mode=ro&_query_only=1"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("replay: %s: %w", path, err)
	}
	return db, nil
}

// isOpencode reports whether the SQLite database at path has the tables
// and columns of opencode's history (parseOpencode reads it). It opens the
// file read-only; a file that is not an SQLite database is not one.
func isOpencode(ctx context.Context, path string) bool {
	if !isStore(path) {
		return false
	}
	db, err := openReadOnly(path)
	if err != nil {
		return false
	}
	defer db.Close()
	return ocCheck(ctx, db) == nil
}

// ocCheck returns an error wrapping errNotOpencode unless db has every
// column of ocTables.
func ocCheck(ctx context.Context, db *sql.DB) error {
	for table, cols := range ocTables {
		have := map[string]bool{}
		rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, table)
		if err != nil {
			return fmt.Errorf("reading the database: %w", err)
		}
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				rows.Close()
				return fmt.Errorf("reading the database: %w", err)
			}
			have[name] = true
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("reading the database: %w", err)
		}
		for _, c := range cols {
			if !have[c] {
				return fmt.Errorf("%w (no %s.%s)", errNotOpencode, table, c)
			}
		}
	}
	return nil
}

// parseOpencode imports every session of opencode's history database
// (~/.local/share/opencode/opencode.db; opencode 1.18 checked), oldest
// first, one recording per model context: a session, and after each of
// its compactions the context that starts from the summary (IDs
// "<session>/part-N"). A subagent's session (opencode's task tool) is a
// session of its own and so a recording of its own. Source is
// "path#<session>".
//
// Each step of an assistant message (from one step-start part to the
// next) is one model call, with the usage its step-finish part records
// and the time opencode wrote that part; its text parts are the answer,
// its tool parts the tool calls and, for each, the result as opencode sent
// it: the output of a completed call, the error of a failed one, and
// "[Tool execution was interrupted]" for one that never finished. A
// result opencode cut itself (over 50 KB or 2,000 lines, the rest saved to
// a file) is recorded as the model saw it, and its full text is read back
// from that file while it still exists (opencode deletes them after 7
// days). Reasoning parts are left out (their tokens are in the usage), as
// are attachments. The summary request of a compaction (another prompt,
// no tools) is not part of either context and is left out. opencode
// records neither the system prompt nor the tool schemas (see Supply).
//
// User inputs no model call answered in between are one turn, the later
// ones its context messages (Turn.Context), as each was sent on its own.
// The database is opened read-only, so a running opencode is not
// disturbed. A database without opencode's tables is refused with an
// error wrapping errNotOpencode and ErrNotTranscript.
func parseOpencode(ctx context.Context, path string) ([]*Recording, error) {
	db, err := openReadOnly(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if err := ocCheck(ctx, db); err != nil {
		if errors.Is(err, errNotOpencode) {
			return nil, fmt.Errorf("%s: %w: %w", path, err, ErrNotTranscript)
		}
		return nil, fmt.Errorf("replay: %s: %w", path, err)
	}
	sessions, err := ocSessions(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("replay: %s: %w", path, err)
	}
	var recs []*Recording
	for _, s := range sessions {
		msgs, parts, err := ocRows(ctx, db, s.ID)
		if err != nil {
			return nil, fmt.Errorf("replay: %s: session %s: %w", path, s.ID, err)
		}
		rs, err := buildOpencode(path, s, msgs, parts, readSavedOutput)
		if errors.Is(err, ErrNoModelCall) {
			continue // a session opened and closed: nothing to replay
		}
		if err != nil {
			return nil, err
		}
		recs = append(recs, rs...)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: %d opencode sessions, none with a model call: %w", path, len(sessions), ErrNoModelCall)
	}
	return recs, nil
}

// ocSessions lists the sessions, oldest first.
func ocSessions(ctx context.Context, db *sql.DB) ([]ocSession, error) {
	rows, err := db.QueryContext(ctx, `SELECT id, COALESCE(parent_id, ''), title, version FROM session ORDER BY time_created, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ocSession
	for rows.Next() {
		var s ocSession
		if err := rows.Scan(&s.ID, &s.Parent, &s.Title, &s.Version); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// ocRows reads a session's messages in order and their parts by message,
// each message's in order (opencode's ids ascend with time).
func ocRows(ctx context.Context, db *sql.DB, session string) ([]ocRow, map[string][]ocRow, error) {
	read := func(q string) ([]ocRow, error) {
		rows, err := db.QueryContext(ctx, q, session)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []ocRow
		for rows.Next() {
			var r ocRow
			if err := rows.Scan(&r.ID, &r.Message, &r.Created, &r.Data); err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, rows.Err()
	}
	msgs, err := read(`SELECT id, '', time_created, data FROM message WHERE session_id = ? ORDER BY time_created, id`)
	if err != nil {
		return nil, nil, err
	}
	list, err := read(`SELECT id, message_id, time_created, data FROM part WHERE session_id = ? ORDER BY message_id, id`)
	if err != nil {
		return nil, nil, err
	}
	parts := map[string][]ocRow{}
	for _, p := range list {
		parts[p.Message] = append(parts[p.Message], p)
	}
	return msgs, parts, nil
}

// ocRecordings names the recordings of one session that hold a model call
// and gives them their warnings.
func ocRecordings(path string, s ocSession, b *ocBuilder) []*Recording {
	var (
		out    []*Recording
		counts []ocCounts
	)
	for i, r := range b.recs {
		if r.Calls() > 0 {
			out, counts = append(out, r), append(counts, b.counts[i])
		}
	}
	for i, r := range out {
		r.Source, r.ID = path+"#"+s.ID, s.ID
		if len(out) > 1 {
			r.ID = fmt.Sprintf("%s/part-%d", s.ID, i+1)
		}
		r.Warnings = counts[i].warnings(s, i, len(out))
	}
	return out
}

// joinNonEmpty joins the non-empty strings with a blank line.
func joinNonEmpty(ss ...string) string {
	var keep []string
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			keep = append(keep, s)
		}
	}
	return strings.Join(keep, "\n\n")
}
