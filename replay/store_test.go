package replay_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentharness/harness/internal/replayengine"
	"github.com/agentharness/harness/replay"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/provider/scripted"
	"github.com/agentharness/harness/store"
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
	dbPath = filepath.Join(ws, ".harness", "harness.db")
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
		model := scripted.New(s, &scripted.Options{Counter: tokens.CounterFunc(func(text string) int { return len(text) / 4 })})
		agent, err := harness.New(model, &harness.Options{
			System: "You read logs.", Tools: w.Tools(), Workspace: ws,
			Guards:   []harness.Guard{(&guard.ResultPolicy{MaxBytes: 4 << 10}).Guard()},
			Recorder: st, Observer: harness.Observer(st.Observe),
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

	recs, skipped, err := replay.LoadWith(ctx, nil, dbPath)
	if err != nil || len(skipped) > 0 {
		t.Fatalf("load: %v, skipped %+v", err, skipped)
	}
	if len(recs) != 2 {
		t.Fatalf("%d recordings, want one per conversation (2)", len(recs))
	}
	var rec *replay.Recording
	for _, r := range recs {
		if r.Format != replay.FormatStore || !strings.HasPrefix(r.Source, dbPath+"#") || r.Source != dbPath+"#"+r.ID {
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
	needles := replayengine.Needles(rec)
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
	none := replayengine.Policy{Name: "none", New: func(replayengine.Env) (*replayengine.Config, error) { return &replayengine.Config{}, nil }}
	capped := replayengine.Policy{Name: "4k", New: func(replayengine.Env) (*replayengine.Config, error) {
		return &replayengine.Config{Guards: []harness.Guard{(&guard.ResultPolicy{MaxBytes: 4 << 10}).Guard()}}, nil
	}}
	all, err := replayengine.Replay(ctx, rec, none, nil)
	if err != nil {
		t.Fatal(err)
	}
	cut, err := replayengine.Replay(ctx, rec, capped, nil)
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
	if _, err := replay.ParseFile(dbPath); !errors.Is(err, replay.ErrManyConversations) {
		t.Errorf("ParseFile on a two-conversation store: %v", err)
	}
	// The folder holding the store imports it and skips its -wal/-shm files.
	recs, skipped, err = replay.Load(filepath.Dir(dbPath))
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
	if _, err := replay.ParseStore(ctx, p); !errors.Is(err, replay.ErrNotTranscript) {
		t.Errorf("foreign database: %v", err)
	}
	recs, skipped, err := replay.Load(p)
	if err != nil || len(recs) != 0 || len(skipped) != 1 || !errors.Is(skipped[0].Err, replay.ErrNotTranscript) {
		t.Errorf("Load: %d recordings, skipped %+v, %v", len(recs), skipped, err)
	}
	after, err := os.ReadFile(p)
	if err != nil || string(after) != string(before) {
		t.Errorf("the foreign database changed (%v)", err)
	}
	// An empty file named .db is not a database at all.
	empty := filepath.Join(t.TempDir(), "empty.db")
	os.WriteFile(empty, nil, 0o600)
	if _, err := replay.ParseStore(ctx, empty); !errors.Is(err, replay.ErrNotTranscript) {
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
	model := scripted.New(s, &scripted.Options{Counter: tokens.CounterFunc(func(text string) int { return len(text) / 4 })})
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

	recs, warns, err := replay.ParseStoreWarn(ctx, dbPath)
	if err != nil || len(recs) != 1 || len(warns) != 0 {
		t.Fatalf("import: %d recordings, warnings %v, %v", len(recs), warns, err)
	}
	rec := recs[0]
	if rec.System != system || len(rec.Tools) != len(live[0].Tools) {
		t.Fatalf("recording: system %q, %d tools; the run sent %d", rec.System, len(rec.Tools), len(live[0].Tools))
	}
	for i, tool := range rec.Tools {
		if want := live[0].Tools[i]; !replay.SameSpec(tool, want) {
			t.Errorf("tool %d: %+v, the run sent %+v", i, tool, want)
		}
	}
	bpe, err := tokens.O200k()
	if err != nil {
		t.Fatal(err)
	}
	counter := tokens.NewCache(bpe, nil)
	none := replayengine.Policy{Name: "none", New: func(replayengine.Env) (*replayengine.Config, error) { return &replayengine.Config{}, nil }}
	rep, err := replayengine.Replay(ctx, rec, none, &replayengine.Options{Counter: counter})
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
	bare.System, bare.Tools, bare.Turns = "", nil, nil
	for _, turn := range rec.Turns {
		bt := &replay.Turn{Input: turn.Input}
		for _, c := range turn.Calls {
			bc := *c
			bc.Tools = nil
			bt.Calls = append(bt.Calls, &bc)
		}
		bare.Turns = append(bare.Turns, bt)
	}
	without, err := replayengine.Replay(ctx, &bare, none, &replayengine.Options{Counter: counter})
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
		recs, warns, err := replay.ParseStoreWarn(ctx, p)
		if err != nil || len(recs) != 1 {
			t.Fatalf("%d recordings, %v", len(recs), err)
		}
		rec := recs[0]
		if len(warns) != 1 || warns[0].Source != p+"#c_v3" || warns[0].Text != replay.PredatesRequests {
			t.Errorf("warnings %v", warns)
		}
		if !strings.Contains(warns[0].String(), "figures exclude the system prompt and the tool schemas") {
			t.Errorf("warning %q", warns[0])
		}
		if rec.System != "" || rec.Tools != nil || rec.Calls() != 3 {
			t.Errorf("v3 recording: system %q, %d tools, %d calls", rec.System, len(rec.Tools), rec.Calls())
		}
		// It still imports and replays.
		if recs, skipped, err := replay.LoadWith(ctx, nil, p); err != nil || len(recs) != 1 || len(skipped) != 0 {
			t.Errorf("Load: %d recordings, skipped %v, %v", len(recs), skipped, err)
		}
		none := replayengine.Policy{Name: "none", New: func(replayengine.Env) (*replayengine.Config, error) { return &replayengine.Config{}, nil }}
		if rep, err := replayengine.Replay(ctx, rec, none, nil); err != nil || len(rep.Calls) != 3 || rep.Calls[0].Tools != 0 {
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
		recs, warns, err := replay.ParseStoreWarn(ctx, dbPath)
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
		// Each call keeps its own list, so the replay is exact: no warning.
		if len(warns) != 0 || recs[0].Warnings != nil {
			t.Errorf("warnings %v / %v", warns, recs[0].Warnings)
		}
		for i, want := range []string{"list_dir", "list_dir", "read_file grep", "read_file grep"} {
			if got := toolNames(callAt(recs[0], i).Tools); got != want {
				t.Errorf("call %d offers %q, the run offered %q", i+1, got, want)
			}
		}
	})

	t.Run("v3 store resumed after the upgrade", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join("..", "store", "sqlite", "testdata", "v3.db"))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "v3.db")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := sqlite.Open(ctx, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		conv, err := st.Load(ctx, "c_v3")
		if err != nil {
			t.Fatal(err)
		}
		model := harness.ModelFunc(func(context.Context, *harness.Request) (*harness.Response, error) {
			return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart("still the old log")}}}, nil
		})
		tool := harness.Tool{Spec: harness.ToolSpec{Name: "read", Description: "read a file", Risk: harness.ReadOnly},
			Func: func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
				return harness.TextResult(""), nil
			}}
		agent, err := harness.New(model, &harness.Options{System: "sys v4", Tools: []harness.Tool{tool}, Recorder: st})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := agent.Run(ctx, conv, "and now?"); err != nil {
			t.Fatal(err)
		}
		st.Close()
		recs, warns, err := replay.ParseStoreWarn(ctx, p)
		if err != nil || len(recs) != 1 {
			t.Fatalf("%d recordings, %v", len(recs), err)
		}
		rec := recs[0]
		want := "3 of 4 rounds were stored before request recording: the replay gives them the system prompt and the tool list recorded later (1 tool)"
		if len(warns) != 1 || warns[0].Text != want || !slices.Equal(rec.Warnings, []string{want}) {
			t.Errorf("warnings %v / %v", warns, rec.Warnings)
		}
		for i := range rec.Calls() {
			if c := callAt(rec, i); (c.Tools != nil) != (i == 3) {
				t.Errorf("call %d: tools %v (only the resumed turn's request was recorded)", i+1, c.Tools)
			}
		}
	})
}

// callAt returns the i-th call of rec (from 0).
func callAt(rec *replay.Recording, i int) *replay.Call {
	for _, t := range rec.Turns {
		if i < len(t.Calls) {
			return t.Calls[i]
		}
		i -= len(t.Calls)
	}
	return nil
}

func toolNames(tools []harness.ToolSpec) string {
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	return strings.Join(names, " ")
}

// narrowRound is a view policy that offers only the first tool in round 2
// of every turn, as a policy narrowing one request would.
var narrowRound = harness.ViewPolicyFunc(func(ctx context.Context, v *harness.View) error {
	if v.Round == 2 && len(v.Tools) > 1 {
		v.Tools = v.Tools[:1]
	}
	return nil
})

// TestStoreReplayPerCallTools records a run whose requests offered
// different tool lists — a per-turn selection, a view policy narrowing
// round 2, a synthesis call with none — and replays the store: with no
// selector every request counts exactly the tool tokens and the tokens of
// the request the model got live. With a selector, the selector picks from
// the union; with KeepToolsOnFinal, the synthesis call keeps the list of
// the call before it.
func TestStoreReplayPerCallTools(t *testing.T) {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "lists.db")
	live := recordLive(t, dbPath, `{"steps": [
		{"tool_calls": [{"name": "list_dir", "args": {"path": "."}}]},
		{"tool_calls": [{"name": "grep", "args": {"pattern": "deploy", "path": "."}}]},
		{"tool_calls": [{"name": "read_file", "args": {"path": "notes.txt"}}]},
		{"text": "Mondays, it says."},
		{"tool_calls": [{"name": "read_file", "args": {"path": "notes.txt", "offset": 1, "limit": 2}}]},
		{"text": "Still Mondays."}
	]}`, harness.Options{System: "sys", MaxRounds: 3, Policies: []harness.ViewPolicy{narrowRound},
		Selector: turnSelector{1: {"list_dir", "grep", "read_file"}, 2: {"read_file", "glob"}}}, "When?", "Sure?")
	var lists []string
	for _, q := range live {
		lists = append(lists, toolNames(q.Tools))
	}
	wantLists := []string{"read_file list_dir grep", "read_file", "read_file list_dir grep", "", "read_file glob", "read_file"}
	if !slices.Equal(lists, wantLists) {
		t.Fatalf("the live run offered %q, want %q", lists, wantLists)
	}

	recs, warns, err := replay.ParseStoreWarn(ctx, dbPath)
	if err != nil || len(recs) != 1 || len(warns) != 0 {
		t.Fatalf("import: %d recordings, warnings %v, %v", len(recs), warns, err)
	}
	rec := recs[0]
	if toolNames(rec.Tools) != "read_file list_dir grep glob" {
		t.Errorf("union %q", toolNames(rec.Tools))
	}
	if c := callAt(rec, 3); !c.Final || c.Tools == nil || len(c.Tools) != 0 {
		t.Errorf("the synthesis call's tools: %#v (want an empty list)", c.Tools)
	}
	bpe, err := tokens.O200k()
	if err != nil {
		t.Fatal(err)
	}
	counter := tokens.NewCache(bpe, nil)
	toolTokens := func(tools []harness.ToolSpec) int {
		n := 0
		for _, tool := range tools {
			n += tokens.CountTool(counter, tool)
		}
		return n
	}
	replayed := func(cfg replayengine.Config) *replayengine.Report {
		t.Helper()
		rep, err := replayengine.Replay(ctx, rec, replayengine.Policy{Name: "p", New: func(replayengine.Env) (*replayengine.Config, error) { c := cfg; return &c, nil }}, &replayengine.Options{Counter: counter})
		if err != nil {
			t.Fatal(err)
		}
		// A selector's reveal rounds (Index 0) are requests the live run
		// did not send; the recorded ones match it one for one.
		if n := len(rep.Calls) - reveals(rep); n != len(live) {
			t.Fatalf("%d replayed calls, %d live", n, len(live))
		}
		return rep
	}

	rep := replayed(replayengine.Config{})
	for i, c := range rep.Calls {
		if want := tokens.CountRequest(counter, live[i]); c.Input != want {
			t.Errorf("request %d: replay counts %d tokens, the live request has %d", i+1, c.Input, want)
		}
		if c.Tools != len(live[i].Tools) || c.ToolTokens != toolTokens(live[i].Tools) {
			t.Errorf("request %d: replay sends %d tools (%d tokens), the run %d (%d)", i+1, c.Tools, c.ToolTokens, len(live[i].Tools), toolTokens(live[i].Tools))
		}
	}
	// Offering the union in every call instead (what a recording without
	// per-call lists gets) counts schemas the run never sent.
	union := *rec
	union.Turns = nil
	for _, turn := range rec.Turns {
		ut := &replay.Turn{Input: turn.Input}
		for _, c := range turn.Calls {
			uc := *c
			uc.Tools = nil
			ut.Calls = append(ut.Calls, &uc)
		}
		union.Turns = append(union.Turns, ut)
	}
	over, err := replayengine.Replay(ctx, &union, replayengine.Policy{Name: "none", New: func(replayengine.Env) (*replayengine.Config, error) { return &replayengine.Config{}, nil }}, &replayengine.Options{Counter: counter})
	if err != nil {
		t.Fatal(err)
	}
	if over.Usage.Input <= rep.Usage.Input {
		t.Errorf("the union replay counts %d input tokens, the exact one %d", over.Usage.Input, rep.Usage.Input)
	}
	t.Logf("tool tokens per request as sent: %v (input %d); with the union in every call: %v (input %d)",
		toolTokenList(rep), rep.Usage.Input, toolTokenList(over), over.Usage.Input)

	// A selector picks from the union, once per turn, for every call; a
	// call of a tool it left out (list_dir and read_file in turn 1,
	// read_file in turn 2) comes after a reveal round with the same list.
	sel := replayed(replayengine.Config{Selector: turnSelector{1: {"grep", "glob"}, 2: {"list_dir"}}})
	wantSel := []string{"reveal grep glob", "grep glob", "grep glob", "reveal grep glob", "grep glob", "",
		"reveal list_dir", "list_dir", "list_dir"}
	if len(sel.Calls) != len(wantSel) {
		t.Fatalf("with a selector, %d requests, want %d", len(sel.Calls), len(wantSel))
	}
	for i, c := range sel.Calls {
		want, reveal := strings.CutPrefix(wantSel[i], "reveal ")
		if n := len(strings.Fields(want)); c.Tools != n || (c.Index == 0) != reveal {
			t.Errorf("with a selector, request %d (index %d) sends %d tools, want %q", i+1, c.Index, c.Tools, wantSel[i])
		}
	}
	// Keeping tools on the synthesis call keeps the list of the call before it.
	keep := replayed(replayengine.Config{KeepToolsOnFinal: true})
	if c := keep.Calls[3]; c.Tools != 3 || c.ToolTokens != toolTokens(live[2].Tools) {
		t.Errorf("KeepToolsOnFinal: the synthesis call sends %d tools (%d tokens), want round 3's %d (%d)", c.Tools, c.ToolTokens, len(live[2].Tools), toolTokens(live[2].Tools))
	}
}

// reveals counts the reveal rounds of rep (its calls of Index 0).
func reveals(rep *replayengine.Report) int {
	n := 0
	for _, c := range rep.Calls {
		if c.Index == 0 {
			n++
		}
	}
	return n
}

func toolTokenList(rep *replayengine.Report) []int {
	var out []int
	for _, c := range rep.Calls {
		out = append(out, c.ToolTokens)
	}
	return out
}

// TestApplyRequestsWarnings: the warnings of stored requests say exactly
// what a replay cannot count as the run did, and nothing when it can.
func TestApplyRequestsWarnings(t *testing.T) {
	read := harness.ToolSpec{Name: "read", Description: "read a file", Risk: harness.ReadOnly}
	read2 := harness.ToolSpec{Name: "read", Description: "read a file, paged", Risk: harness.ReadOnly}
	list := harness.ToolSpec{Name: "list", Description: "list files", Risk: harness.ReadOnly}
	conv := &harness.Conversation{ID: "c", Turns: []*harness.Turn{
		{Index: 1, Input: "a", Rounds: []*harness.Round{{Index: 1}, {Index: 2}, {Index: 3}, {Index: 4, Final: true}}},
	}}
	req := func(round int, system string, tools ...harness.ToolSpec) store.Request {
		return store.Request{Turn: 1, Round: round, Recorded: true, System: system, Tools: tools, ToolSet: toolNames(tools), Final: round == 4}
	}
	for _, tc := range []struct {
		name  string
		reqs  []store.Request
		warns []string
		tools string // of the recording
	}{
		{"lists differ", []store.Request{req(1, "s", read, list), req(2, "s", read), req(3, "s", list), req(4, "s")}, nil, "read list"},
		{"system changed", []store.Request{req(1, "s", read), req(2, "t", read), req(3, "s", read), req(4, "s")},
			[]string{"the system prompt changed at turn 1 round 2: the replay sends the first one (1 bytes) in every call"}, "read"},
		{"two schemas", []store.Request{req(1, "s", read), req(2, "s", read2, list), req(3, "s", read), req(4, "s")},
			[]string{"tools offered with two different schemas (each recorded call replays with its own; a tool selector and rounds without a recorded request use the first): read"}, "read list"},
		{"partial, one list", []store.Request{{Turn: 1, Round: 1}, req(2, "s", read), req(3, "s", read), req(4, "s", read)},
			[]string{"1 of 4 rounds were stored before request recording: the replay gives them the system prompt and the tool list recorded later (1 tool)"}, "read"},
		{"partial, lists differ", []store.Request{{Turn: 1, Round: 1}, req(2, "s", read), req(3, "s", list), req(4, "s")},
			[]string{"1 of 4 rounds were stored before request recording: the replay gives them the system prompt and the union of the 2 tool lists recorded later (2 tools)"}, "read list"},
		{"none recorded", []store.Request{{Turn: 1, Round: 1}, {Turn: 1, Round: 2}, {Turn: 1, Round: 3}, {Turn: 1, Round: 4}}, []string{replay.PredatesRequests}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := replay.FromConversation("x", conv, "")
			if err != nil {
				t.Fatal(err)
			}
			warns := replay.ApplyRequests(rec, conv, tc.reqs)
			if !slices.Equal(warns, tc.warns) || toolNames(rec.Tools) != tc.tools {
				t.Errorf("warnings %q, tools %q; want %q, %q", warns, toolNames(rec.Tools), tc.warns, tc.tools)
			}
			for i, q := range tc.reqs {
				c := rec.Turns[0].Calls[i]
				if (c.Tools == nil) == q.Recorded || toolNames(c.Tools) != toolNames(q.Tools) {
					t.Errorf("call %d: tools %#v, request %+v", i+1, c.Tools, q)
				}
			}
		})
	}
}

// TestCallToolsJSON: a recording's JSON keeps a call's nil list (use the
// recording's) apart from its empty one (the request sent no tools).
func TestCallToolsJSON(t *testing.T) {
	rec := &replay.Recording{Source: "s", Format: replay.FormatStore, ID: "c", Warnings: []string{"w"}, Turns: []*replay.Turn{{Input: "q", Calls: []*replay.Call{
		{Tools: []harness.ToolSpec{{Name: "read", InputSchema: []byte(`{"type":"object"}`)}}}, {}, {Final: true, Tools: []harness.ToolSpec{}},
	}}}}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var back replay.Recording
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	calls := back.Turns[0].Calls
	if len(calls[0].Tools) != 1 || calls[1].Tools != nil || calls[2].Tools == nil || len(calls[2].Tools) != 0 || !slices.Equal(back.Warnings, rec.Warnings) {
		t.Errorf("after JSON: %s", b)
	}
}

// TestParseStoreCallTimes: a conversation recorded into the store on a
// fake clock (a tool that takes two minutes, a user who comes back ten
// minutes later) imports with each call's Time the time its round was
// answered, so replayengine.IdleGaps gives the run's pauses and a replay's views see
// them (View.Idle).
func TestParseStoreCallTimes(t *testing.T) {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "harness.db")
	st, err := sqlite.Open(ctx, dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := t0 // the agent runs its calls one by one here: no lock needed
	slow := harness.Tool{Spec: harness.ToolSpec{Name: "build"}, Func: func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
		now = now.Add(2 * time.Minute)
		return harness.TextResult("built"), nil
	}}
	model := harness.ModelFunc(func(_ context.Context, req *harness.Request) (*harness.Response, error) {
		if req.Turn == 1 && req.Round == 1 {
			return &harness.Response{Message: harness.Message{ToolCalls: []harness.ToolCall{{ID: "b1", Name: "build", Args: json.RawMessage(`{}`)}}}}, nil
		}
		return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart("done")}}}, nil
	})
	agent, err := harness.New(model, &harness.Options{Tools: []harness.Tool{slow}, Recorder: st, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("c_timed")
	if _, err := agent.Run(ctx, conv, "build it"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(10 * time.Minute)
	if _, err := agent.Run(ctx, conv, "again?"); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	recs, err := replay.ParseStore(ctx, dbPath)
	if err != nil || len(recs) != 1 {
		t.Fatalf("replay.ParseStore: %d recordings, %v", len(recs), err)
	}
	rec := recs[0]
	wantTimes := []time.Time{t0, t0.Add(2 * time.Minute), t0.Add(12 * time.Minute)}
	var got []time.Time
	for _, turn := range rec.Turns {
		for _, c := range turn.Calls {
			got = append(got, c.Time)
		}
	}
	if len(got) != len(wantTimes) {
		t.Fatalf("%d calls, want %d", len(got), len(wantTimes))
	}
	for i := range got {
		if !got[i].Equal(wantTimes[i]) {
			t.Errorf("call %d: Time %v, want %v", i+1, got[i], wantTimes[i])
		}
	}
	wantGaps := []time.Duration{0, 2 * time.Minute, 10 * time.Minute}
	if gaps := replayengine.IdleGaps(rec); !slices.Equal(gaps, wantGaps) {
		t.Errorf("IdleGaps %v, want %v", gaps, wantGaps)
	}
	var seen []time.Duration
	if _, err := replayengine.Replay(ctx, rec, replayengine.Policy{Name: "idle", New: func(replayengine.Env) (*replayengine.Config, error) {
		return &replayengine.Config{Policies: []harness.ViewPolicy{harness.ViewPolicyFunc(func(_ context.Context, v *harness.View) error {
			seen = append(seen, v.Idle)
			return nil
		})}}, nil
	}}, nil); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, wantGaps) {
		t.Errorf("the replay's views saw Idle %v, want %v", seen, wantGaps)
	}
}

// TestFromConversationKeepsContext: a stored turn's context messages (the
// proxy stores a client's) are the recording's, so a replay sends them:
// the first request counts their tokens too.
func TestFromConversationKeepsContext(t *testing.T) {
	ctx := context.Background()
	agents := "# AGENTS.md instructions for /repo\n\n" + strings.Repeat("Run the tests before you answer. ", 40)
	skill := "<skill>\nname: release\n" + strings.Repeat("Tag, then push. ", 20) + "\n</skill>"
	turn := func(withContext bool) *harness.Conversation {
		conv := harness.NewConversation("c")
		tr := &harness.Turn{Index: 1, Input: "fix the build", Outcome: harness.Answered, Rounds: []*harness.Round{
			{Index: 1, Final: true, Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("Fixed.")}}}}}
		if withContext {
			tr.Context = []harness.ContextMessage{{Text: agents}, {Text: skill, AfterInput: true}}
		}
		conv.Turns = []*harness.Turn{tr}
		return conv
	}
	with, err := replay.FromConversation("x", turn(true), "")
	if err != nil {
		t.Fatal(err)
	}
	without, err := replay.FromConversation("x", turn(false), "")
	if err != nil {
		t.Fatal(err)
	}
	if want := turn(true).Turns[0].Context; !slices.Equal(with.Turns[0].Context, want) {
		t.Fatalf("recording context %+v, want %+v", with.Turns[0].Context, want)
	}
	if got := with.Turns[0].Calls[0].Request; got != 3 {
		t.Errorf("the answer's request follows %d messages, want 3 (input and two context messages)", got)
	}
	bpe, err := tokens.O200k()
	if err != nil {
		t.Fatal(err)
	}
	counter := tokens.NewCache(bpe, nil)
	none := replayengine.Policy{Name: "none", New: func(replayengine.Env) (*replayengine.Config, error) { return &replayengine.Config{}, nil }}
	a, err := replayengine.Replay(ctx, with, none, &replayengine.Options{Counter: counter})
	if err != nil {
		t.Fatal(err)
	}
	b, err := replayengine.Replay(ctx, without, none, &replayengine.Options{Counter: counter})
	if err != nil {
		t.Fatal(err)
	}
	if extra := a.Calls[0].Input - b.Calls[0].Input; extra < counter.Count(agents)+counter.Count(skill) {
		t.Errorf("the context adds %d tokens to the request, want at least its %d", extra, counter.Count(agents)+counter.Count(skill))
	}
}
