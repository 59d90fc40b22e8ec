package replay

import (
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
	base := strings.ToLower(filepath.Base(name))
	switch {
	case strings.HasSuffix(base, ".traj.json"):
		return ParseMiniSWE(name, data)
	case strings.HasSuffix(base, ".jsonl"):
		return ParseOpenAI(name, data)
	case strings.HasSuffix(base, ".json"):
	default:
		return nil, fmt.Errorf("%s: %w (want .traj.json, .json or .jsonl)", name, ErrNotTranscript)
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

// ParseFile reads and imports one file.
func ParseFile(path string) (*Recording, error) {
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
// lexical order, skipping hidden entries). A file that fails to import
// is listed in skipped with its error, and the others are still
// imported; err is set only when a path cannot be read at all.
func Load(paths ...string) (recs []*Recording, skipped []Skipped, err error) {
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return recs, skipped, fmt.Errorf("replay: %w", err)
		}
		if !st.IsDir() {
			rec, err := ParseFile(p)
			if err != nil {
				skipped = append(skipped, Skipped{Path: p, Err: err, Reason: err.Error()})
				continue
			}
			recs = append(recs, rec)
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
			if !d.IsDir() {
				files = append(files, path)
			}
			return nil
		})
		if werr != nil {
			return recs, skipped, fmt.Errorf("replay: %w", werr)
		}
		sort.Strings(files)
		for _, f := range files {
			rec, err := ParseFile(f)
			if err != nil {
				skipped = append(skipped, Skipped{Path: f, Err: err, Reason: err.Error()})
				continue
			}
			recs = append(recs, rec)
		}
	}
	return recs, skipped, nil
}
