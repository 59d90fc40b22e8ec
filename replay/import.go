package replay

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrNotTranscript is wrapped by the error for a file that is not in any
// format the importers know (as opposed to a transcript that is broken).
var ErrNotTranscript = errors.New("not a transcript in a known format")

// Parse imports data read from name, recognising the format from the
// name and the content: *.traj.json is a mini-swe-agent trajectory,
// *.jsonl a chat-message list, and a *.json file is sniffed (an array or
// {"messages"} is a chat-message list, {"trajectory_format"} or {"info",
// "messages"} a trajectory, {"turns"} a harness conversation).
func Parse(name string, data []byte) (*Recording, error) {
	if strings.HasPrefix(string(data[:min(len(data), len(sqliteMagic))]), sqliteMagic) {
		return nil, fmt.Errorf("%s: an SQLite database: import a transcript store with ParseStore, ParseFile or Load", name)
	}
	base := strings.ToLower(filepath.Base(name))
	switch {
	case strings.HasSuffix(base, ".traj.json"):
		return ParseMiniSWE(name, data)
	case strings.HasSuffix(base, ".jsonl"):
		return ParseOpenAI(name, data)
	case strings.HasSuffix(base, ".json"):
	default:
		return nil, fmt.Errorf("%s: %w (want .traj.json, .json, .jsonl or a transcript store)", name, ErrNotTranscript)
	}
	src := &source{name: name, data: data}
	start := skipSpace(data, 0)
	if start >= int64(len(data)) {
		return nil, src.errAt(start, "", "empty file", nil)
	}
	if data[start] == '[' {
		return ParseOpenAI(name, data)
	}
	fields, err := src.objectFields(0, data, "")
	if err != nil {
		return nil, err
	}
	_, hasMsgs := fields["messages"]
	_, hasInfo := fields["info"]
	_, hasFormat := fields["trajectory_format"]
	_, hasTurns := fields["turns"]
	switch {
	case hasFormat || (hasMsgs && hasInfo):
		return ParseMiniSWE(name, data)
	case hasTurns:
		return ParseConversation(name, data)
	case hasMsgs:
		return ParseOpenAI(name, data)
	}
	return nil, fmt.Errorf("%s: %w (a JSON object without messages or turns)", name, ErrNotTranscript)
}

// ParseFile reads and imports one file. A transcript store (an SQLite
// file, see ParseStore) is imported when it holds exactly one
// conversation; otherwise the error wraps ErrManyConversations.
func ParseFile(path string) (*Recording, error) {
	if IsStore(path) {
		recs, err := ParseStore(context.Background(), path)
		switch {
		case err != nil:
			return nil, err
		case len(recs) != 1:
			return nil, fmt.Errorf("%s: %w (%d): import it with Load or ParseStore", path, ErrManyConversations, len(recs))
		}
		return recs[0], nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	return Parse(path, data)
}

// Skipped is a file an import passed over, and why.
type Skipped struct {
	Path string `json:"path"`
	Err  error  `json:"-"`
	// Reason is Err's text, for JSON reports.
	Reason string `json:"reason"`
}

// Load imports every path: files directly, folders recursively (in
// lexical order, skipping hidden entries and SQLite's -wal, -shm and
// -journal files). A transcript store (an SQLite file) gives every
// conversation it holds (ParseStore). A file that fails to import is
// listed in skipped with its error, and the others are still imported;
// err is set only when a path cannot be read at all.
func Load(paths ...string) (recs []*Recording, skipped []Skipped, err error) {
	return LoadContext(context.Background(), paths...)
}

// LoadContext is Load with a context for reading transcript stores.
func LoadContext(ctx context.Context, paths ...string) (recs []*Recording, skipped []Skipped, err error) {
	one := func(path string) {
		if IsStore(path) {
			rs, err := ParseStore(ctx, path)
			if err != nil {
				skipped = append(skipped, Skipped{Path: path, Err: err, Reason: err.Error()})
				return
			}
			recs = append(recs, rs...)
			return
		}
		rec, err := ParseFile(path)
		if err != nil {
			skipped = append(skipped, Skipped{Path: path, Err: err, Reason: err.Error()})
			return
		}
		recs = append(recs, rec)
	}
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return recs, skipped, fmt.Errorf("replay: %w", err)
		}
		st, err := os.Stat(p)
		if err != nil {
			return recs, skipped, fmt.Errorf("replay: %w", err)
		}
		if !st.IsDir() {
			one(p)
			continue
		}
		var files []string
		werr := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if path != p && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.IsDir() && !sqliteSidecar(path) {
				files = append(files, path)
			}
			return nil
		})
		if werr != nil {
			return recs, skipped, fmt.Errorf("replay: %w", werr)
		}
		sort.Strings(files)
		for _, f := range files {
			if err := ctx.Err(); err != nil {
				return recs, skipped, fmt.Errorf("replay: %w", err)
			}
			one(f)
		}
	}
	return recs, skipped, nil
}

// sqliteSidecar reports whether path is the -wal, -shm or -journal file of
// an SQLite database beside it: part of that database, not a transcript.
func sqliteSidecar(path string) bool {
	for _, suf := range []string{"-wal", "-shm", "-journal"} {
		if db, ok := strings.CutSuffix(path, suf); ok {
			if _, err := os.Stat(db); err == nil {
				return true
			}
		}
	}
	return false
}
