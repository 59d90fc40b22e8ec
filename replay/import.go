package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// ErrNotTranscript is wrapped by the error for a file that is not in any
// format the importers know (as opposed to a transcript that is broken).
var ErrNotTranscript = errors.New("not a transcript in a known format")

// ErrNoModelCall is wrapped by the error for a transcript in a known
// format that records no model call (an agent session opened and closed,
// or one that holds only titles and snapshots): nothing to replay.
var ErrNoModelCall = errors.New("no model call")

// ErrSavedOutput marks a file in a folder where an agent keeps the whole
// output of a tool call it cut (Claude Code's tool-results, Gemini CLI's
// tool-outputs, beside their sessions): not a transcript, so a folder
// import passes over it without reading it. The session beside it records
// what the model was shown.
var ErrSavedOutput = errors.New("a tool output an agent saved beside its session, not a transcript")

// savedOutputDirs are the folders of ErrSavedOutput (opencode's is
// tool-output, beside its database).
var savedOutputDirs = []string{"tool-results", "tool-outputs", "tool-output"}

// opencodeDirs are the folders opencode keeps beside its database that hold
// no transcript (git snapshots of the workspace, logs, binaries, cloned
// repositories): a folder import passes over them unread.
var opencodeDirs = []string{"snapshot", "log", "bin", "repos", "worktree"}

// Parse imports data read from name, recognising the format by its
// content: a Claude Code session (JSONL or a JSON array of its entries), a
// Codex CLI rollout, a Gemini CLI chat (a Content list, a session file or
// the session log that replaced it), a SWE-agent trajectory ({history,
// trajectory, info}), a mini-swe-agent trajectory ({"trajectory_format"},
// or {"info", "messages"}), a harness conversation ({"turns"}), or a
// chat-message list, OpenAI's, the Anthropic Messages API's or the
// Responses API's input items (a JSON array, JSONL, or a request body's
// {"messages"} or {"input"}, with its "system", "instructions" and
// "tools"). For a file that holds several model contexts (Claude
// Code's subagents and compactions, Codex's compactions) it returns the
// first; ParseAll returns them all. The name is used in errors, and picks
// the format only where the content does not: a *.traj.json is read as a
// mini-swe-agent trajectory and a *.jsonl as a chat-message list.
func Parse(name string, data []byte) (*Recording, error) {
	recs, err := ParseAll(name, data)
	if err != nil {
		return nil, err
	}
	return recs[0], nil
}

// ParseAll imports every model context data holds (see Parse): one
// recording for most formats, the main chain's parts and then each
// subagent for Claude Code, one per compaction for Codex.
func ParseAll(name string, data []byte) ([]*Recording, error) {
	if strings.HasPrefix(string(data[:min(len(data), len(sqliteMagic))]), sqliteMagic) {
		return nil, fmt.Errorf("%s: an SQLite database: import a transcript store or opencode's database with ParseFile or Load", name)
	}
	one := func(rec *Recording, err error) ([]*Recording, error) {
		if err != nil {
			return nil, err
		}
		return []*Recording{rec}, nil
	}
	switch sniff(data) {
	case formatClaudeCode:
		return parseClaudeCodeAll(name, data, nil)
	case formatCodex:
		return parseCodexAll(name, data)
	case formatGeminiCLI:
		return one(parseGeminiCLI(name, data))
	case formatSWEAgent:
		return one(parseSWEAgent(name, data))
	case formatOpenHands:
		return parseOpenHandsAll(name, data)
	case formatOpencode:
		return one(parseOpencodeRun(name, data))
	}
	return one(parseByName(name, data))
}

// sniff names the format data is in, from its first record alone: one
// of formatClaudeCode, formatCodex, formatGeminiCLI, formatSWEAgent and
// formatOpenHands,
// or "" for the other formats (which Parse tells apart by their fields and
// the file's name).
func sniff(data []byte) string {
	f, ok := firstRecord(data)
	if !ok {
		return ""
	}
	return sniffFields(f)
}

// sniffFields is sniff given the fields of the first record.
func sniffFields(f map[string]json.RawMessage) string {
	typ := jsonString(f["type"])
	switch {
	case (has(f, "sessionId", "messages") || has(f, "sessionId", "projectHash")) && !has(f, "type"):
		return formatGeminiCLI
	case has(f, "role", "parts"), gemIsStream(f), gemIsOutput(f):
		return formatGeminiCLI
	case isCodexExec(f):
		return formatCodex
	case isOpencodeRun(f):
		return formatOpencode
	case has(f, "payload") && (typ == "session_meta" || typ == "response_item" || typ == "event_msg" || typ == "turn_context" || typ == "compacted"):
		return formatCodex
	case has(f, "id", "timestamp") && !has(f, "type") && !has(f, "role") && (has(f, "instructions") || has(f, "git")):
		return formatCodex // the first line of a rollout before Codex 0.4x
	case isCCOutput(f), has(f, "parentUuid") || has(f, "leafUuid") || has(f, "isSidechain") ||
		(has(f, "sessionId") && typ != "") || typ == "file-history-snapshot":
		return formatClaudeCode
	case isOpenHandsEvent(f) || isOpenHandsOutput(f):
		return formatOpenHands
	case has(f, "history") && (has(f, "trajectory") || has(f, "info") || has(f, "environment")):
		return formatSWEAgent
	case has(f, "history") && !has(f, "messages") && !has(f, "turns"):
		return formatSWEAgent
	}
	return ""
}

// parseByName imports the formats Sniff does not name: by the file's
// extension, then the fields of a JSON object.
func parseByName(name string, data []byte) (*Recording, error) {
	base := strings.ToLower(filepath.Base(name))
	switch {
	case strings.HasSuffix(base, ".traj.json"):
		return parseMiniSWE(name, data)
	case strings.HasSuffix(base, ".jsonl"):
		return parseOpenAI(name, data)
	case strings.HasSuffix(base, ".json"):
	default:
		return nil, fmt.Errorf("%s: %w (want a Claude Code session, a Codex rollout, a Gemini CLI chat, a SWE-agent .traj, a mini-swe-agent .traj.json, a chat-message .json or .jsonl, a transcript store, or opencode's opencode.db)", name, ErrNotTranscript)
	}
	src := &source{name: name, data: data}
	start := skipSpace(data, 0)
	if start >= int64(len(data)) {
		return nil, src.errAt(start, "", "empty file", nil)
	}
	if data[start] == '[' {
		return parseOpenAI(name, data)
	}
	fields, err := src.objectFields(0, data, "")
	if err != nil {
		return nil, err
	}
	_, hasMsgs := fields["messages"]
	_, hasInput := fields["input"]
	_, hasInfo := fields["info"]
	_, hasFormat := fields["trajectory_format"]
	_, hasTurns := fields["turns"]
	switch {
	case hasFormat || (hasMsgs && hasInfo):
		return parseMiniSWE(name, data)
	case hasTurns:
		return parseConversation(name, data)
	case hasMsgs || hasInput:
		return parseOpenAI(name, data)
	}
	return nil, fmt.Errorf("%s: %w (a JSON object without messages or turns)", name, ErrNotTranscript)
}

// ParseFile reads and imports one file. A transcript store (an SQLite
// file, see parseStore) or opencode's database (parseOpencode) is imported
// when it holds exactly one conversation (model context); otherwise the
// error wraps ErrManyConversations.
func ParseFile(path string) (*Recording, error) {
	if isStore(path) {
		parse := parseStore
		if isOpencode(context.Background(), path) {
			parse = parseOpencode
		}
		recs, err := parse(context.Background(), path)
		switch {
		case err != nil:
			return nil, err
		case len(recs) != 1:
			return nil, fmt.Errorf("%s: %w (%d): import it with Load", path, ErrManyConversations, len(recs))
		}
		return recs[0], nil
	}
	recs, err := parseFileStream(path, nil)
	if err != nil {
		return nil, err
	}
	return recs[0], nil
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
// conversation it holds (parseStore). A file that fails to import is
// listed in skipped with its error, and the others are still imported;
// err is set only when a path cannot be read at all. Claude Code
// sessions, Codex rollouts and Gemini CLI Content lists, session logs and
// stream-json outputs are read one record (a line, or an element of a
// one-line JSON array) at a time, so their memory is bounded by the
// largest record and what the recordings keep, not the file's size; other
// files are read whole.
func Load(paths ...string) (recs []*Recording, skipped []Skipped, err error) {
	return LoadWith(context.Background(), nil, paths...)
}

// LoadWith is Load with a context for reading transcript stores, that
// fills in what the formats leave out from supply (nil: nothing; see
// Supply.Apply). Every model context a file
// holds is imported (ParseAll): a Claude Code session gives its main
// chain and each subagent.
func LoadWith(ctx context.Context, supply *Supply, paths ...string) (recs []*Recording, skipped []Skipped, err error) {
	skipped, err = LoadEach(ctx, supply, paths, func(r *Recording) error {
		recs = append(recs, r)
		return nil
	})
	return recs, skipped, err
}

// LoadEach is LoadWith handing the recordings to yield, in the same order,
// as each file is read, instead of returning them all: a caller that
// drops each recording once it is done with it holds one file's at a
// time. Every path is found (folders walked) before the first file is
// read, so err for a path that cannot be read at all comes before any
// recording. yield's first error stops the load and is returned as it
// is.
func LoadEach(ctx context.Context, supply *Supply, paths []string, yield func(*Recording) error) (skipped []Skipped, err error) {
	files, saved, err := loadFiles(ctx, paths)
	if err != nil {
		return nil, err
	}
	for _, path := range saved {
		skipped = append(skipped, Skipped{Path: path, Err: ErrSavedOutput, Reason: path + ": " + ErrSavedOutput.Error()})
	}
	seen := ccSeen{} // Claude Code entries by uuid, each imported once
	for _, path := range files {
		if err := ctx.Err(); err != nil {
			return skipped, fmt.Errorf("replay: %w", err)
		}
		rs, err := loadFile(ctx, path, seen)
		if err != nil {
			skipped = append(skipped, Skipped{Path: path, Err: err, Reason: err.Error()})
			continue
		}
		for _, r := range rs {
			supply.Apply(r)
			if err := yield(r); err != nil {
				return skipped, err
			}
		}
	}
	return skipped, nil
}

// loadFile imports every recording of the file at path; a Claude Code
// session's entries seen holds are left out.
func loadFile(ctx context.Context, path string, seen ccSeen) ([]*Recording, error) {
	if isStore(path) {
		if isOpencode(ctx, path) {
			return parseOpencode(ctx, path)
		}
		return parseStore(ctx, path)
	}
	return parseFileStream(path, seen)
}

// loadFiles lists the files Load reads for paths, in order: each file
// path, and each folder's files in lexical order, hidden entries and
// SQLite's sidecar files left out. saved are the folders' files under a
// folder of tool outputs an agent saved (ErrSavedOutput), not read.
func loadFiles(ctx context.Context, paths []string) (files, saved []string, err error) {
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("replay: %w", err)
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, nil, fmt.Errorf("replay: %w", err)
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		var found []string
		werr := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if path != p && strings.HasPrefix(d.Name(), ".") || d.IsDir() && opencodeDir(path) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			switch {
			case d.IsDir() || sqliteSidecar(path):
			case underSavedOutputs(p, path):
				saved = append(saved, path)
			default:
				found = append(found, path)
			}
			return nil
		})
		if werr != nil {
			return nil, nil, fmt.Errorf("replay: %w", werr)
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	return files, saved, nil
}

// underSavedOutputs reports whether path, found walking folder root, lies
// in a folder of saved tool outputs (savedOutputDirs) below root.
func underSavedOutputs(root, path string) bool {
	rel, err := filepath.Rel(root, filepath.Dir(path))
	if err != nil || rel == "." {
		return false
	}
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		if slices.Contains(savedOutputDirs, part) {
			return true
		}
	}
	return false
}

// opencodeDir reports whether the folder at path is one of opencodeDirs
// beside an opencode database.
func opencodeDir(path string) bool {
	if !slices.Contains(opencodeDirs, filepath.Base(path)) {
		return false
	}
	_, err := os.Stat(filepath.Join(filepath.Dir(path), "opencode.db"))
	return err == nil
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
