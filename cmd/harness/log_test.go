package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/numfmt"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/sqlite"
)

// TestLogShowsWhatTheModelSaw runs two turns through the CLI (the second
// resumes the first with --conversation), then reads them back with
// "harness log list" and "harness log show".
func TestLogShowsWhatTheModelSaw(t *testing.T) {
	ws := t.TempDir()
	for name, n := range map[string]int{"a.txt": 9000, "b.txt": 9000, "c.txt": 300} {
		line := strings.Repeat(strings.TrimSuffix(name, ".txt"), 99) + "\n"
		if err := os.WriteFile(filepath.Join(ws, name), []byte(strings.Repeat(line, n/100)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	turn1 := writeScript(t, `{"steps":[
		{"expect":{"turn":1,"round":1},"tool_calls":[{"id":"ra","name":"read_file","args":{"path":"a.txt"}},{"id":"rb","name":"read_file","args":{"path":"b.txt"}}]},
		{"expect":{"turn":1,"round":2},"tool_calls":[{"id":"rc","name":"read_file","args":{"path":"c.txt"}}]},
		{"expect":{"turn":1,"final":true},"text":"a, b and c read"}]}`)
	_, stderr, code := inproc(t, "run", "--model", "scripted:"+turn1, "--workspace", ws, "--max-rounds", "2", "--turn-budget", "8000", "--no-compact", "read the files")
	if code != 0 {
		t.Fatalf("turn 1: exit %d: %s", code, stderr)
	}
	m := regexp.MustCompile(`conversation (c_[0-9a-f]+) \(continue it with --conversation`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("turn 1 printed no conversation id: %s", stderr)
	}
	id := m[1]
	if _, err := os.Stat(filepath.Join(ws, ".harness", "harness.db")); err != nil {
		t.Fatalf("no store in the workspace: %v", err)
	}

	turn2 := writeScript(t, `{"steps":[{"expect":{"turn":2,"round":1,"contains":["read the files","a, b and c read","and now?"]},"text":"still here"}]}`)
	stdout, stderr, code := inproc(t, "run", "--model", "scripted:"+turn2, "--workspace", ws, "--conversation", id, "--no-compact", "and now?")
	if code != 0 || strings.TrimSpace(stdout) != "still here" {
		t.Fatalf("turn 2: exit %d: %s %s", code, stdout, stderr)
	}

	stdout, stderr, code = inproc(t, "log", "list", "--workspace", ws)
	if code != 0 {
		t.Fatalf("log list: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "TITLE") || !regexp.MustCompile(id+`\s+\S+ \S+\s+2\s+4\s+3\s+.*read the files`).MatchString(stdout) {
		t.Errorf("log list:\n%s", stdout)
	}

	stdout, stderr, code = inproc(t, "log", "show", id, "--workspace", ws, "--turn", "1")
	if code != 0 {
		t.Fatalf("log show: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"turn 1 · round_limit · 3 round(s)",
		"evidence chars per request: r1 0, r2 ",
		"r3 8,000 (final)",
		"RETURNED", "MODEL COPY", "IN REQUESTS",
		"ra turnbudget marker (r3): ⏎ … (trimmed to fit this turn's evidence budget",
		"full result: call id rb]",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("log show lacks %q:\n%s", want, stdout)
		}
	}
	if !regexp.MustCompile(`(?m)^\s+1\s+ra\s+read_file\s+[\d,]+ ch\s+= returned\s+-\s+r3: [\d,]+ ch trimmed$`).MatchString(stdout) {
		t.Errorf("log show has no row for ra with its trim:\n%s", stdout)
	}
	// What each request offered: the default system prompt, the same in
	// every request, and the tool schemas of the two tool rounds (none on
	// the synthesis call).
	if want := fmt.Sprintf("system prompt: %s B, the same in every request\n", numfmt.Thousands(int64(len(defaultSystem)))); !strings.Contains(stdout, want) {
		t.Errorf("log show lacks %q:\n%s", want, stdout)
	}
	offered := regexp.MustCompile(`tool schemas per request: r1 (\d+) \(([\d,]+) B\), r2 (\d+) \(([\d,]+) B\), r3 none \(final\)\n`).FindStringSubmatch(stdout)
	if offered == nil || offered[1] != offered[3] || offered[2] != offered[4] || offered[1] == "0" {
		t.Errorf("log show has no tool schemas per request:\n%s", stdout)
	}
	if strings.Contains(stdout, "turn 2 ·") {
		t.Errorf("--turn 1 showed turn 2:\n%s", stdout)
	}

	stdout, _, code = inproc(t, "log", "show", id, "--workspace", ws, "--json")
	var out struct {
		Calls []struct {
			CallID    string `json:"call_id"`
			FullChars int    `json:"full_chars"`
			Views     []struct {
				SizeOut int `json:"size_out"`
			} `json:"views"`
		} `json:"calls"`
		SystemPrompt      string `json:"system_prompt"`
		SystemPromptBytes int    `json:"system_prompt_bytes"`
		SystemPrompts     int    `json:"system_prompts"`
		Requests          []struct {
			Turn, Round, Tools int
			Final, Recorded    bool
			SystemBytes        int    `json:"system_bytes"`
			ToolBytes          int    `json:"tool_bytes"`
			ToolSet            string `json:"tool_set"`
		} `json:"requests"`
		ToolSets map[string][]string `json:"tool_sets"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &out) != nil || len(out.Calls) != 3 {
		t.Fatalf("log show --json: exit %d: %s", code, stdout)
	}
	if out.SystemPrompt != defaultSystem || out.SystemPromptBytes != len(defaultSystem) || out.SystemPrompts != 1 || len(out.Requests) != 4 || len(out.ToolSets) != 1 {
		t.Fatalf("log show --json: system %d bytes (%d distinct), %d requests, %d tool lists", out.SystemPromptBytes, out.SystemPrompts, len(out.Requests), len(out.ToolSets))
	}
	for _, q := range out.Requests {
		names := out.ToolSets[q.ToolSet]
		if !q.Recorded || q.SystemBytes != len(defaultSystem) || q.Tools != len(names) || q.Final != (q.Tools == 0) || q.Final && q.Round != 3 {
			t.Errorf("request %d.%d: %+v", q.Turn, q.Round, q)
		}
		if q.Tools > 0 && (!slices.Contains(names, "read_file") || fmt.Sprint(q.ToolBytes) != strings.ReplaceAll(offered[2], ",", "")) {
			t.Errorf("request %d.%d offered %v, %d bytes", q.Turn, q.Round, names, q.ToolBytes)
		}
	}
	total := 0
	for _, c := range out.Calls {
		if len(c.Views) == 1 {
			total += c.Views[0].SizeOut
		} else {
			total += c.FullChars
		}
	}
	if total != 8000 {
		t.Errorf("the final request showed %d chars of evidence; water-filling two large results and a small one fills the 8,000 exactly", total)
	}

	if _, stderr, code = inproc(t, "run", "--model", "scripted:"+turn2, "--workspace", ws, "--conversation", "c_nope", "hi"); code != 1 || !strings.Contains(stderr, "harness log list") {
		t.Errorf("resuming an unknown id: exit %d: %s", code, stderr)
	}
	if _, stderr, code = inproc(t, "log", "show", "c_nope", "--workspace", ws); code != 1 || !strings.Contains(stderr, "no conversation c_nope in ") {
		t.Errorf("unknown id: exit %d: %s", code, stderr)
	}
	if _, stderr, code = inproc(t, "log", "show", id, "--workspace", ws, "--turn", "9"); code != 2 {
		t.Errorf("--turn 9: exit %d: %s", code, stderr)
	}
	if _, stderr, code = inproc(t, "log", "list", "--workspace", t.TempDir()); code != 1 || !strings.Contains(stderr, "no transcript store") {
		t.Errorf("empty workspace: exit %d: %s", code, stderr)
	}

	// Deleting removes the conversation and its spill folder.
	spillDir := filepath.Join(ws, ".harness", "spill", id)
	if err := os.MkdirAll(spillDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code = inproc(t, "log", "delete", id, "--workspace", ws); code != 0 {
		t.Fatalf("log delete: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(spillDir); !os.IsNotExist(err) {
		t.Errorf("the spill folder survived the deletion: %v", err)
	}
	if stdout, _, _ = inproc(t, "log", "list", "--workspace", ws); !strings.Contains(stdout, "no conversations") {
		t.Errorf("after delete: %s", stdout)
	}
}

func TestRunConversationErrors(t *testing.T) {
	script := writeScript(t, `{"steps":[{"text":"x"}]}`)
	ws := t.TempDir()
	if _, stderr, code := inproc(t, "run", "--model", "scripted:"+script, "--workspace", ws, "--conversation", "c_missing", "hi"); code != 1 || !strings.Contains(stderr, "no transcript store") {
		t.Errorf("missing conversation: exit %d: %s", code, stderr)
	}
	if _, stderr, code := inproc(t, "run", "--model", "scripted:"+script, "--workspace", ws, "--conversation", "c_x", "--no-store", "hi"); code != 2 {
		t.Errorf("--conversation with --no-store: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, ".harness", "harness.db")); !os.IsNotExist(err) {
		t.Errorf("resuming a missing conversation created a store: %v", err)
	}
	if _, stderr, code := inproc(t, "run", "--model", "scripted:"+script, "--workspace", ws, "--no-store", "hi"); code != 0 || strings.Contains(stderr, "continue it with") {
		t.Errorf("--no-store: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, ".harness", "harness.db")); !os.IsNotExist(err) {
		t.Errorf("--no-store created a store: %v", err)
	}
}

// TestLogShowOldStore reads a store written before request recording (the
// v3 fixture of store/sqlite): the request sizes come from the rounds'
// own figures, and the system prompt is said to be unknown.
func TestLogShowOldStore(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "store", "sqlite", "testdata", "v3.db"))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "v3.db")
	if err := os.WriteFile(db, data, 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := inproc(t, "log", "show", "c_v3", "--db", db)
	if code != 0 {
		t.Fatalf("log show: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"system prompt: not recorded (stored before request recording",
		"tool schemas per request: r1 2 (",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("log show lacks %q:\n%s", want, stdout)
		}
	}
	stdout, _, code = inproc(t, "log", "show", "c_v3", "--db", db, "--json")
	var out struct {
		Requests []struct {
			Recorded bool
			Tools    int
		} `json:"requests"`
		SystemPrompts int `json:"system_prompts"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &out) != nil || len(out.Requests) != 3 || out.SystemPrompts != 0 {
		t.Fatalf("log show --json: exit %d: %s", code, stdout)
	}
	for i, q := range out.Requests {
		if q.Recorded || q.Tools != 2 {
			t.Errorf("v3 request %d: %+v (the rounds' own figures: 2 tools in every request)", i+1, q)
		}
	}
}

func TestStoreArgsHidesThePassword(t *testing.T) {
	for _, tc := range []struct{ db, want string }{
		{"postgres://u:secret@127.0.0.1:5432/h", "postgres://u@127.0.0.1:5432/h"},
		{"postgresql://u@h/db?password=secret&sslmode=disable", "postgresql://u@h/db?sslmode=disable"},
		{"postgres://u:secret@h/db?password=other", "postgres://u@h/db"},
		{"/tmp/x.db", "/tmp/x.db"},
	} {
		got := storeArgs(mustGetwd(t), tc.db)
		if strings.Contains(got, "secret") || strings.Contains(got, "other") || !strings.Contains(got, tc.want) {
			t.Errorf("storeArgs(%q) = %q, want it to name %q and no password", tc.db, got, tc.want)
		}
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// TestLogShowsColdAnswers: log show names the rounds answered more than
// the cache's lifetime after the answer before (across turns too), and
// the JSON gives each request its answer time and pause; rounds stored
// without a time have neither.
func TestLogShowsColdAnswers(t *testing.T) {
	t0 := time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC)
	round := func(i int, at time.Time) *harness.Round {
		return &harness.Round{Index: i, Answered: at, Assistant: harness.Message{Role: harness.RoleAssistant}}
	}
	conv := &harness.Conversation{ID: "c_cold", Turns: []*harness.Turn{
		{Index: 1, Input: "first", Outcome: harness.Answered, Rounds: []*harness.Round{
			round(1, t0), round(2, t0.Add(2*time.Minute)), round(3, t0.Add(14*time.Minute))}},
		{Index: 2, Input: "second", Outcome: harness.Answered, Rounds: []*harness.Round{
			round(1, t0.Add(74*time.Minute)), round(2, time.Time{}), round(3, t0.Add(80*time.Minute))}},
	}}
	var b strings.Builder
	writeConversation(&b, conv, nil, nil, nil, 0)
	out := b.String()
	for _, want := range []string{
		"turn 1 ·", "answered more than 5m0s after the answer before (the prompt cache had expired): r3 12m0s\n",
		"answered more than 5m0s after the answer before (the prompt cache had expired): r1 1h0m0s\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log show lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "the prompt cache had expired"); n != 2 {
		t.Errorf("%d cold lines, want 2 (r2 of turn 1 paused 2 minutes; turn 2's r3 follows a round with no time):\n%s", n, out)
	}
	var reqs []store.Request
	for _, tn := range conv.Turns {
		for _, r := range tn.Rounds {
			reqs = append(reqs, store.Request{Turn: tn.Index, Round: r.Index})
		}
	}
	got := newLogRequests(conv, reqs).Requests
	want := []float64{0, 120, 720, 3600, 0, 0}
	for i, q := range got {
		if q.PauseSeconds != want[i] {
			t.Errorf("request %d.%d: pause %v s, want %v", q.Turn, q.Round, q.PauseSeconds, want[i])
		}
	}
	if !got[0].Answered.Equal(t0) || !got[4].Answered.IsZero() {
		t.Errorf("answered: %v, %v; want %v and zero", got[0].Answered, got[4].Answered, t0)
	}
}

// contextStore writes, into a real SQLite store under t.TempDir, a
// conversation whose first turn carries two context messages (one before
// the input: 1,234 characters with a newline, non-ASCII so bytes differ;
// one after it) and whose second turn has none. It returns the store's
// path, the conversation's id and the conversation as saved.
func contextStore(t *testing.T) (string, string, *harness.Conversation) {
	t.Helper()
	t0 := time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC)
	answer := func(i int, text string) *harness.Round {
		return &harness.Round{Index: i, Answered: t0, Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart(text)}}}
	}
	conv := &harness.Conversation{ID: "c_ctx", Turns: []*harness.Turn{
		{Index: 1, Input: "fix the test", Outcome: harness.Answered, Started: t0, Ended: t0.Add(time.Minute),
			Context: []harness.ContextMessage{
				{Text: "# AGENTS.md instructions for /repo\n" + strings.Repeat("ü", 1199)},
				{Text: "<skill>\n<name>review</name>\n</skill>", AfterInput: true},
			},
			Rounds: []*harness.Round{answer(1, "fixed")}},
		{Index: 2, Input: "second", Outcome: harness.RoundLimit, Started: t0.Add(2 * time.Minute), Ended: t0.Add(3 * time.Minute),
			Rounds: []*harness.Round{answer(1, "looking"), answer(2, "done")}},
	}}
	path := filepath.Join(t.TempDir(), "harness.db")
	s, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Save(context.Background(), conv); err != nil {
		t.Fatal(err)
	}
	return path, conv.ID, conv
}

// TestLogShowContext: log show prints a turn's context messages under its
// input, one line each, in order, with their size in characters and
// their place beside the input; a turn without context prints none. The
// JSON's "turns" array carries them in full, and respects --turn.
func TestLogShowContext(t *testing.T) {
	db, id, conv := contextStore(t)
	agents := "  context 1 (before the input, 1,234 chars): # AGENTS.md instructions for /repo ⏎ " + strings.Repeat("ü", 163) + "… (+1036 chars)"
	skill := "  context 2 (after the input, 36 chars): <skill> ⏎ <name>review</name> ⏎ </skill>"
	t0 := conv.Turns[0].Started
	turn1 := logTurn{Index: 1, Outcome: "answered", Input: "fix the test", Rounds: 1, Started: t0, Ended: t0.Add(time.Minute),
		Context: []logContext{{Text: conv.Turns[0].Context[0].Text}, {Text: conv.Turns[0].Context[1].Text, AfterInput: true}}}
	turn2 := logTurn{Index: 2, Outcome: "round_limit", Input: "second", Rounds: 2, Started: t0.Add(2 * time.Minute), Ended: t0.Add(3 * time.Minute)}
	for _, tc := range []struct {
		name string
		args []string
		// context maps each shown turn's input line to the lines that
		// must follow it; a turn with none must be followed by no
		// context line.
		context map[string][]string
		turns   []logTurn
	}{
		{"all turns", nil, map[string][]string{"  input: fix the test": {agents, skill}, "  input: second": nil}, []logTurn{turn1, turn2}},
		{"turn 1", []string{"--turn", "1"}, map[string][]string{"  input: fix the test": {agents, skill}}, []logTurn{turn1}},
		{"turn 2", []string{"--turn", "2"}, map[string][]string{"  input: second": nil}, []logTurn{turn2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"log", "show", id, "--db", db}, tc.args...)
			stdout, stderr, code := inproc(t, args...)
			if code != 0 {
				t.Fatalf("log show: exit %d: %s", code, stderr)
			}
			checkContextLines(t, stdout, tc.context)
			stdout, stderr, code = inproc(t, append(args, "--json")...)
			if code != 0 {
				t.Fatalf("log show --json: exit %d: %s", code, stderr)
			}
			checkLogTurns(t, stdout, id, tc.turns)
		})
	}
}

// checkContextLines checks that in the text output of log show each input
// line of context is followed by exactly its context lines, and that the
// output holds no other context line.
func checkContextLines(t *testing.T, stdout string, context map[string][]string) {
	t.Helper()
	lines := strings.Split(stdout, "\n")
	want := 0
	for input, ctx := range context {
		want += len(ctx)
		i := slices.Index(lines, input)
		if i < 0 || i+1+len(ctx) >= len(lines) {
			t.Fatalf("log show lacks %q and the %d line(s) after it:\n%s", input, len(ctx)+1, stdout)
		}
		got := lines[i+1 : i+2+len(ctx)]
		if !slices.Equal(got[:len(ctx)], ctx) || strings.HasPrefix(got[len(ctx)], "  context ") {
			t.Errorf("after %q:\n%s\nwant:\n%s\n(and no more context lines)", input, strings.Join(got, "\n"), strings.Join(ctx, "\n"))
		}
	}
	if n := len(regexp.MustCompile(`(?m)^  context \d+ \(`).FindAllString(stdout, -1)); n != want {
		t.Errorf("%d context lines, want %d:\n%s", n, want, stdout)
	}
}

// checkLogTurns checks the "turns" of log show --json against want, that
// the fields printed before "turns" existed are still there, and that a
// turn without context has no "context" key.
func checkLogTurns(t *testing.T, stdout, id string, want []logTurn) {
	t.Helper()
	var out struct {
		Conversation string    `json:"conversation"`
		Turns        []logTurn `json:"turns"`
		Calls        []any     `json:"calls"`
		Requests     []any     `json:"requests"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("log show --json: %v\n%s", err, stdout)
	}
	for i := range out.Turns {
		// The store gives times back in the local zone.
		out.Turns[i].Started, out.Turns[i].Ended = out.Turns[i].Started.UTC(), out.Turns[i].Ended.UTC()
	}
	if out.Conversation != id || !reflect.DeepEqual(out.Turns, want) {
		t.Errorf("turns:\n%+v\nwant:\n%+v", out.Turns, want)
	}
	if out.Calls == nil || out.Requests == nil {
		t.Errorf("the existing fields are gone:\n%s", stdout)
	}
	var raw struct {
		Turns []map[string]json.RawMessage `json:"turns"`
	}
	if err := json.Unmarshal([]byte(stdout), &raw); err != nil || len(raw.Turns) != len(want) {
		t.Fatalf("%d turns (%v), want %d", len(raw.Turns), err, len(want))
	}
	for i, rt := range raw.Turns {
		if _, has := rt["context"]; has != (len(want[i].Context) > 0) {
			t.Errorf("turn %s: context key present %v, want %v", rt["index"], has, !has)
		}
	}
}
