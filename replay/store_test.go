package replay

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/provider/scripted"
	"github.com/agentharness/harness/store/sqlite"
	"github.com/agentharness/harness/tokens"
	"github.com/agentharness/harness/tools/workspace"
)

// recordRuns runs two conversations through a real agent — workspace
// tools, a 4 KiB result ceiling that spills, a scripted model that
// reports the usage of the requests it gets — recording them into the
// default store of a temporary workspace. It returns the store's path.
func recordRuns(t *testing.T) (dbPath string, logText string) {
	t.Helper()
	ctx := context.Background()
	ws := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 200; i++ {
		if i == 100 {
			b.WriteString("2024-05-01 03:12:44 ERROR importer: constraint ERR_7f3a9c violated on orders_customer_fk\n")
			continue
		}
		fmt.Fprintf(&b, "2024-05-01 03:%02d:%02d INFO importer: batch %04d committed, %d rows\n", i%60, (i*7)%60, i, i*37%5000)
	}
	logText = b.String()
	if err := os.WriteFile(filepath.Join(ws, "app.log"), []byte(logText), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := workspace.New(ws, &workspace.Options{Mode: workspace.ModeReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	dbPath = filepath.Join(ws, sqlite.DefaultPath)
	st, err := sqlite.Open(ctx, dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}()
	run := func(script string, inputs ...string) {
		s, err := scripted.Parse([]byte(script))
		if err != nil {
			t.Fatal(err)
		}
		// Usage computed from each request: bytes ÷ 4, the prefix shared
		// with the previous request counted as cached.
		model := scripted.New(s, &scripted.Options{Counter: func(text string) int { return len(text) / 4 }})
		agent, err := harness.New(model, &harness.Options{
			System: "You read logs.", Tools: w.Tools(), Workspace: ws,
			Guards:   []harness.Guard{(&guard.ResultPolicy{MaxBytes: guard.Bytes(4 << 10)}).Guard()},
			Recorder: st, Observer: st.Observer(nil),
		})
		if err != nil {
			t.Fatal(err)
		}
		conv := harness.NewConversation("")
		for _, in := range inputs {
			if _, err := agent.Run(ctx, conv, in); err != nil {
				t.Fatal(err)
			}
		}
	}
	run(`{"steps": [
		{"text": "Reading the log.", "tool_calls": [{"name": "read_file", "args": {"path": "app.log"}}]},
		{"text": "Searching for the error.", "tool_calls": [{"name": "grep", "args": {"pattern": "ERR_7f3a9c", "path": "app.log"}}]},
		{"text": "The import failed on ERR_7f3a9c (line 100)."},
		{"text": "Listing.", "tool_calls": [{"name": "list", "args": {"path": "."}}]},
		{"text": "Only app.log."}
	]}`, "Why did the import fail?", "Which files are there?")
	run(`{"steps": [
		{"tool_calls": [{"name": "read_file", "args": {"path": "app.log", "offset": 1, "limit": 5}}]},
		{"text": "It starts with batch 0001."}
	]}`, "How does the log start?")
	return dbPath, logText
}

func TestParseStore(t *testing.T) {
	ctx := context.Background()
	dbPath, logText := recordRuns(t)

	recs, skipped, err := LoadContext(ctx, dbPath)
	if err != nil || len(skipped) > 0 {
		t.Fatalf("load: %v, skipped %+v", err, skipped)
	}
	if len(recs) != 2 {
		t.Fatalf("%d recordings, want one per conversation (2)", len(recs))
	}
	var rec *Recording
	for _, r := range recs {
		if r.Format != FormatStore || !strings.HasPrefix(r.Source, dbPath+"#") || r.Source != dbPath+"#"+r.ID {
			t.Errorf("format %q source %q id %q", r.Format, r.Source, r.ID)
		}
		if len(r.Turns) == 2 {
			rec = r
		}
	}
	if rec == nil {
		t.Fatal("the two-turn conversation is missing")
	}
	if rec.Calls() != 5 || len(rec.Turns[0].Calls) != 3 || rec.Turns[1].Input != "Which files are there?" {
		t.Fatalf("%d calls; turn 1 has %d", rec.Calls(), len(rec.Turns[0].Calls))
	}

	// The full payload is what the tool returned, not the model's copy.
	read := rec.Turns[0].Calls[0].Results[0]
	if read.Tool != "read_file" || !strings.Contains(read.FullText(), "ERR_7f3a9c") || len(read.FullText()) < len(logText) {
		t.Errorf("read result: tool %s, %d chars", read.Tool, len(read.FullText()))
	}
	if strings.Contains(read.Shown, "ERR_7f3a9c") || len(read.Shown) > 4<<10 || !strings.Contains(read.Shown, ".harness/spill/") {
		t.Errorf("shown copy (%d bytes) is not the spilled preview:\n%s", len(read.Shown), read.Shown)
	}
	// Usage is what the model reported, round by round.
	st, err := sqlite.Open(ctx, dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	conv, err := st.LoadFull(ctx, rec.ID)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	for ti, turn := range conv.Turns {
		for ri, r := range turn.Rounds {
			c := rec.Turns[ti].Calls[ri]
			if c.Usage != r.Usage || r.Usage.Input == 0 || !c.HasUsage || c.Assistant.Text() != r.Assistant.Text() {
				t.Errorf("turn %d call %d: usage %+v, stored %+v", ti+1, ri+1, c.Usage, r.Usage)
			}
		}
	}

	// The needle of the read is its error code, used in the grep.
	needles := Needles(rec)
	found := false
	for _, n := range needles {
		if n.Text == "ERR_7f3a9c" && n.CallID == read.CallID && n.Turn == 0 && n.Call == 1 {
			found = true
		}
	}
	if !found {
		t.Fatalf("needles %+v", needles)
	}

	// Replayed with everything shown, then under the 4 KiB ceiling: the
	// needle is visible, then only recoverable through the spill file.
	none := Policy{Name: "none", New: func(Env) (*Config, error) { return &Config{}, nil }}
	capped := Policy{Name: "4k", New: func(Env) (*Config, error) {
		return &Config{Guards: []harness.Guard{(&guard.ResultPolicy{MaxBytes: guard.Bytes(4 << 10)}).Guard()}}, nil
	}}
	all, err := Replay(ctx, rec, none, nil)
	if err != nil {
		t.Fatal(err)
	}
	cut, err := Replay(ctx, rec, capped, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Calls) != 5 || all.Visible != all.Needles || all.Needles == 0 {
		t.Errorf("none: %d calls, %d/%d visible", len(all.Calls), all.Visible, all.Needles)
	}
	if cut.Visible >= cut.Needles || cut.Recoverable != cut.Needles || cut.Usage.Input >= all.Usage.Input {
		t.Errorf("4k: %d/%d visible, %d recoverable, input %d vs %d", cut.Visible, cut.Needles, cut.Recoverable, cut.Usage.Input, all.Usage.Input)
	}

	// A store with two conversations is not one recording.
	if _, err := ParseFile(dbPath); !errors.Is(err, ErrManyConversations) {
		t.Errorf("ParseFile on a two-conversation store: %v", err)
	}
	// The folder holding the store imports it and skips its -wal/-shm files.
	recs, skipped, err = Load(filepath.Dir(dbPath))
	if err != nil || len(recs) != 2 {
		t.Errorf("folder: %d recordings, %v", len(recs), err)
	}
	for _, s := range skipped {
		if strings.HasSuffix(s.Path, "-wal") || strings.HasSuffix(s.Path, "-shm") || strings.HasSuffix(s.Path, ".db") {
			t.Errorf("skipped %s: %s", s.Path, s.Reason)
		}
	}
}

// TestParseStoreForeignDatabase checks that an SQLite file that is not a
// harness store is refused and left as it was.
func TestParseStoreForeignDatabase(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "other.db")
	db, err := sql.Open("sqlite", "file:"+p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseStore(ctx, p); !errors.Is(err, ErrNotTranscript) {
		t.Errorf("foreign database: %v", err)
	}
	recs, skipped, err := Load(p)
	if err != nil || len(recs) != 0 || len(skipped) != 1 || !errors.Is(skipped[0].Err, ErrNotTranscript) {
		t.Errorf("Load: %d recordings, skipped %+v, %v", len(recs), skipped, err)
	}
	after, err := os.ReadFile(p)
	if err != nil || string(after) != string(before) {
		t.Errorf("the foreign database changed (%v)", err)
	}
	// An empty file named .db is not a database at all.
	empty := filepath.Join(t.TempDir(), "empty.db")
	os.WriteFile(empty, nil, 0o600)
	if _, err := ParseStore(ctx, empty); !errors.Is(err, ErrNotTranscript) {
		t.Errorf("empty file: %v", err)
	}
}

// turnSelector offers the tools named for each turn (by turn index), the
// way a per-turn tool selection would.
type turnSelector map[int][]string

func (s turnSelector) Select(ctx context.Context, conv *harness.Conversation, input string, tools []harness.ToolSpec) ([]harness.ToolSpec, error) {
	names := s[len(conv.Turns)]
	var out []harness.ToolSpec
	for _, t := range tools {
		if slices.Contains(names, t.Name) {
			out = append(out, t)
		}
	}
	return out, nil
}

// recordLive runs inputs through a real agent (workspace tools, the
// scripted model) into a new store at dbPath and returns every request
// the model got.
func recordLive(t *testing.T, dbPath, script string, opts harness.Options, inputs ...string) []*harness.Request {
	t.Helper()
	ctx := context.Background()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte(strings.Repeat("the deploy key rotates on Mondays\n", 40)), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := workspace.New(ws, &workspace.Options{Mode: workspace.ModeReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := scripted.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	model := scripted.New(s, &scripted.Options{Counter: func(text string) int { return len(text) / 4 }})
	var reqs []*harness.Request
	capture := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		reqs = append(reqs, req)
		return model.Generate(ctx, req)
	})
	opts.Tools, opts.Workspace, opts.Recorder = w.Tools(), ws, st
	agent, err := harness.New(capture, &opts)
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("c_live")
	for _, in := range inputs {
		if _, err := agent.Run(ctx, conv, in); err != nil {
			t.Fatal(err)
		}
	}
	return reqs
}

// TestStoreReplayCountsWhatTheRunSent records a conversation through the
// real agent, imports the store and replays it keeping everything: every
// request the replay builds counts exactly the tokens of the request the
// model got live — system prompt, messages and tool schemas — including
// the synthesis call that sent no tools.
func TestStoreReplayCountsWhatTheRunSent(t *testing.T) {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "live.db")
	const system = "You answer questions about the workspace. Read files before answering; quote what you read."
	live := recordLive(t, dbPath, `{"steps": [
		{"text": "Listing.", "tool_calls": [{"name": "list_dir", "args": {"path": "."}}]},
		{"tool_calls": [{"name": "read_file", "args": {"path": "notes.txt"}}, {"name": "grep", "args": {"pattern": "deploy", "path": "."}}]},
		{"text": "The deploy key rotates on Mondays."},
		{"text": "Nothing else."}
	]}`, harness.Options{System: system, MaxRounds: 2}, "When does the deploy key rotate?", "Anything else?")
	if len(live) != 4 || !live[2].Final || len(live[0].Tools) == 0 {
		t.Fatalf("%d live requests (third final: %v)", len(live), len(live) > 2 && live[2].Final)
	}

	recs, warns, err := ParseStoreWarn(ctx, dbPath)
	if err != nil || len(recs) != 1 || len(warns) != 0 {
		t.Fatalf("import: %d recordings, warnings %v, %v", len(recs), warns, err)
	}
	rec := recs[0]
	if rec.System != system || len(rec.Tools) != len(live[0].Tools) {
		t.Fatalf("recording: system %q, %d tools; the run sent %d", rec.System, len(rec.Tools), len(live[0].Tools))
	}
	for i, tool := range rec.Tools {
		if want := live[0].Tools[i]; !sameSpec(tool, want) {
			t.Errorf("tool %d: %+v, the run sent %+v", i, tool, want)
		}
	}
	bpe, err := tokens.O200k()
	if err != nil {
		t.Fatal(err)
	}
	counter := tokens.NewCache(bpe, nil)
	none := Policy{Name: "none", New: func(Env) (*Config, error) { return &Config{}, nil }}
	rep, err := Replay(ctx, rec, none, &Options{Counter: counter})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Calls) != len(live) {
		t.Fatalf("%d replayed calls, %d live", len(rep.Calls), len(live))
	}
	for i, c := range rep.Calls {
		want := tokens.CountRequest(counter, live[i])
		if c.Input != want {
			t.Errorf("request %d: replay counts %d tokens, the live request has %d", i+1, c.Input, want)
		}
		toolTokens := 0
		for _, tool := range live[i].Tools {
			toolTokens += tokens.CountTool(counter, tool)
		}
		if c.Tools != len(live[i].Tools) || c.ToolTokens != toolTokens {
			t.Errorf("request %d: replay sends %d tools (%d tokens), the run %d (%d)", i+1, c.Tools, c.ToolTokens, len(live[i].Tools), toolTokens)
		}
	}
	// Without the requests (a store from before request recording), the
	// same replay counts less than the run sent.
	bare := *rec
	bare.System, bare.Tools = "", nil
	without, err := Replay(ctx, &bare, none, &Options{Counter: counter})
	if err != nil {
		t.Fatal(err)
	}
	if without.Usage.Input >= rep.Usage.Input {
		t.Errorf("without system prompt and schemas: %d input tokens, with: %d", without.Usage.Input, rep.Usage.Input)
	}
	t.Logf("first request: %d tokens live and replayed, of which %d tool schemas; all %d requests: %d input tokens (%d without system prompt and schemas)",
		rep.Calls[0].Input, rep.Calls[0].ToolTokens, len(rep.Calls), rep.Usage.Input, without.Usage.Input)
}

// TestStoreReplayWarnings: a store written before request recording
// imports with a warning saying the figures exclude the system prompt and
// the schemas; a run whose turns offered different tool lists imports
// their union, with a warning.
func TestStoreReplayWarnings(t *testing.T) {
	ctx := context.Background()

	t.Run("v3 store", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join("..", "store", "sqlite", "testdata", "v3.db"))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "v3.db")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		recs, warns, err := ParseStoreWarn(ctx, p)
		if err != nil || len(recs) != 1 {
			t.Fatalf("%d recordings, %v", len(recs), err)
		}
		rec := recs[0]
		if len(warns) != 1 || warns[0].Source != p+"#c_v3" || warns[0].Text != PredatesRequests {
			t.Errorf("warnings %v", warns)
		}
		if !strings.Contains(warns[0].String(), "figures exclude the system prompt and the tool schemas") {
			t.Errorf("warning %q", warns[0])
		}
		if rec.System != "" || rec.Tools != nil || rec.Calls() != 3 {
			t.Errorf("v3 recording: system %q, %d tools, %d calls", rec.System, len(rec.Tools), rec.Calls())
		}
		// It still imports and replays.
		if recs, skipped, err := LoadContext(ctx, p); err != nil || len(recs) != 1 || len(skipped) != 0 {
			t.Errorf("Load: %d recordings, skipped %v, %v", len(recs), skipped, err)
		}
		none := Policy{Name: "none", New: func(Env) (*Config, error) { return &Config{}, nil }}
		if rep, err := Replay(ctx, rec, none, nil); err != nil || len(rep.Calls) != 3 || rep.Calls[0].Tools != 0 {
			t.Errorf("replay of the v3 store: %v", err)
		}
	})

	t.Run("tool lists differ between turns", func(t *testing.T) {
		dbPath := filepath.Join(t.TempDir(), "sel.db")
		live := recordLive(t, dbPath, `{"steps": [
			{"tool_calls": [{"name": "list_dir", "args": {"path": "."}}]},
			{"text": "One file."},
			{"tool_calls": [{"name": "read_file", "args": {"path": "notes.txt"}}]},
			{"text": "Mondays."}
		]}`, harness.Options{System: "sys", Selector: turnSelector{1: {"list_dir"}, 2: {"read_file", "grep"}}}, "What is there?", "When?")
		if len(live[0].Tools) != 1 || len(live[2].Tools) != 2 {
			t.Fatalf("the selection offered %d then %d tools", len(live[0].Tools), len(live[2].Tools))
		}
		recs, warns, err := ParseStoreWarn(ctx, dbPath)
		if err != nil || len(recs) != 1 {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range recs[0].Tools {
			names = append(names, tool.Name)
		}
		if strings.Join(names, " ") != "list_dir read_file grep" {
			t.Errorf("union of the offered tools: %v", names)
		}
		if len(warns) != 1 || !strings.Contains(warns[0].Text, "2 different tool lists") || !strings.Contains(warns[0].Text, "union (3 tools)") {
			t.Errorf("warnings %v", warns)
		}
	})
}
