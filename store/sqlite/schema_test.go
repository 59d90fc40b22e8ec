package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/agentharness/harness/store/internal/storefix"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/store/internal/rows"
)

// TestUpgradeFromEveryVersion writes a database at every older version of
// the schema, with rows as version 1 knew them, then opens it with the
// current code: every later migration applies, the data survives, and the
// new columns are filled from the old rows.
func TestUpgradeFromEveryVersion(t *testing.T) {
	for v := 1; v < schemaVersion(); v++ {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) { testUpgradeFrom(t, v) })
	}
}

func testUpgradeFrom(t *testing.T, version int) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := open(ctx, path, nil, version)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO conversations (id, created_ns, updated_ns) VALUES ('c_old', 1000, 2000)`,
		`INSERT INTO turns (conv_id, idx, input, outcome, started_ns, ended_ns, input_tokens, output_tokens)
		 VALUES ('c_old', 1, 'what changed in v1?' || char(10) || 'details', 'answered', 1000, 2000, 50, 5)`,
		`INSERT INTO rounds (conv_id, turn, idx, input_tokens, output_tokens) VALUES ('c_old', 1, 1, 20, 2), ('c_old', 1, 2, 30, 3)`,
		`INSERT INTO messages (conv_id, turn, round, role, parts) VALUES ('c_old', 1, 1, 'assistant', NULL),
		 ('c_old', 1, 2, 'assistant', '[{"type":"text","text":"nothing"}]')`,
		`INSERT INTO tool_calls (conv_id, turn, round, dropped, seq, call_id, name, args) VALUES ('c_old', 1, 1, 0, 1, 'k1', 'read', '{}')`,
		`INSERT INTO results (conv_id, turn, round, seq, call_id, tool, bytes, full_chars, model_bytes, model_chars, model)
		 VALUES ('c_old', 1, 1, 1, 'k1', 'read', 11, 11, 4, 4, '[{"type":"text","text":"hell"}]')`,
		`INSERT INTO result_bodies (conv_id, turn, round, seq, parts) VALUES ('c_old', 1, 1, 1, '[{"type":"text","text":"hello world"}]')`,
		`INSERT INTO cuts (conv_id, turn, round, seq, n, kind, by, bytes_in, bytes_out) VALUES ('c_old', 1, 1, 1, 1, 'truncated', 'ceiling', 11, 4)`,
	} {
		if _, err := old.w.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := old.w.ExecContext(ctx, `SELECT title FROM conversations`); version == 1 && err == nil {
		t.Fatal("version 1 already has titles: the test does not test an upgrade")
	}
	if _, err := old.w.ExecContext(ctx, `SELECT req_recorded FROM rounds`); version < 4 && err == nil {
		t.Fatalf("version %d already records requests: the test does not test an upgrade", version)
	}
	if _, err := old.w.ExecContext(ctx, `SELECT refs FROM cuts`); version < 5 && err == nil {
		t.Fatalf("version %d already keeps cut refs: the test does not test an upgrade", version)
	}
	if _, err := old.w.ExecContext(ctx, `SELECT chunked FROM result_bodies`); version < 7 && err == nil {
		t.Fatalf("version %d already chunks payloads: the test does not test an upgrade", version)
	}
	if _, err := old.w.ExecContext(ctx, `SELECT owner FROM leases`); version < 6 && err == nil {
		t.Fatalf("version %d already has leases: the test does not test an upgrade", version)
	}
	if _, err := old.w.ExecContext(ctx, `SELECT answered_ns FROM rounds`); version < 8 && err == nil {
		t.Fatalf("version %d already times rounds: the test does not test an upgrade", version)
	}
	if _, err := old.w.ExecContext(ctx, `SELECT text FROM turn_context`); version < 9 && err == nil {
		t.Fatalf("version %d already keeps turn context: the test does not test an upgrade", version)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := open(ctx, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var versions []int
	err = query(ctx, mustTx(t, s.r), `SELECT version FROM schema_migrations ORDER BY version`, nil, func(r rows.Scanner) error {
		var v int
		if err := r.Scan(&v); err != nil {
			return err
		}
		versions = append(versions, v)
		return nil
	})
	if err != nil || len(versions) != schemaVersion() || versions[0] != 1 || versions[len(versions)-1] != schemaVersion() {
		t.Fatalf("applied versions %v (%v), want 1..%d", versions, err, schemaVersion())
	}
	list, err := s.List(ctx)
	wantTitle := "what changed in v1?"
	if version > 1 {
		wantTitle = "" // the conversation row was written without one, as by hand
	}
	if err != nil || len(list) != 1 || list[0].Title != wantTitle || list[0].Calls != 1 || list[0].Usage.Input != 50 {
		t.Fatalf("List after upgrade: %+v, %v", list, err)
	}
	conv, err := s.Load(ctx, "c_old")
	if err != nil {
		t.Fatal(err)
	}
	res := conv.Turns[0].Rounds[0].Results[0]
	if res.ModelText() != "hell" || len(res.Cuts) != 1 || res.Cuts[0].Refs != nil || conv.Turns[0].Answer() != "nothing" {
		t.Errorf("old conversation loads as %+v", res)
	}
	full, err := s.FullResult(ctx, "c_old", "k1")
	if err != nil || full.FullText() != "hello world" {
		t.Errorf("old full result: %v, %v", full, err)
	}
	storefix.CheckAnswered(t, s, "c_old", 1, false)
	if conv.Turns[0].Context != nil || conv.Turns[0].Input != "what changed in v1?\ndetails" {
		t.Errorf("old turn loads with input %q and context %+v", conv.Turns[0].Input, conv.Turns[0].Context)
	}
	// The upgraded file takes new turns.
	a := storefix.NewAgent(t, s, storefix.ToolModel(nil, nil))
	if _, err := a.Run(ctx, conv, "and now?"); err != nil {
		t.Fatal(err)
	}
	checkUpgradedContext(t, s)
	calls, err := s.Calls(ctx, "c_old", 0)
	if err != nil || len(calls) != 3 || calls[0].Marker != "" {
		t.Errorf("calls after upgrade: %d, %v", len(calls), err)
	}
	// The new rounds say when they were answered.
	storefix.CheckAnswered(t, s, "c_old", 2, true)
	// The old rounds say their requests were not recorded; the new ones
	// carry theirs.
	reqs, err := s.Requests(ctx, "c_old", 0)
	if err != nil || len(reqs) != 4 {
		t.Fatalf("requests after upgrade: %+v, %v", reqs, err)
	}
	for _, q := range reqs {
		switch {
		case q.Turn == 1 && (q.Recorded || q.System != "" || q.Tools != nil):
			t.Errorf("old request %d.%d: %+v", q.Turn, q.Round, q)
		case q.Turn == 2 && (!q.Recorded || q.System != "sys" || len(q.Tools) != 1 || q.Tools[0].Name != "fetch"):
			t.Errorf("new request %d.%d: %+v", q.Turn, q.Round, q)
		}
	}

	// Opening twice is a no-op.
	s2, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
}

// TestUpgradeV3File opens testdata/v3.db, a store the schema-v3 code
// wrote through a real agent (testdata/README.md): it migrates, loads and
// resumes as it did, and its rounds say their requests were not recorded.
func TestUpgradeV3File(t *testing.T) {
	ctx := context.Background()
	s := openCopy(t, "v3.db")
	conv, err := s.Load(ctx, "c_v3")
	if err != nil {
		t.Fatal(err)
	}
	if len(conv.Turns) != 2 || len(conv.Turns[0].Rounds) != 2 || conv.Turns[1].Answer() != "The old log repeats one line." {
		t.Fatalf("c_v3 loads as %d turns", len(conv.Turns))
	}
	r1 := conv.Turns[0].Rounds[0]
	if len(r1.Results) != 2 || !r1.Results[0].Partial || r1.Results[1].FullText() != "old.log\nnotes.txt" || r1.Stats.Tools != 2 {
		t.Errorf("round 1.1: %+v", r1)
	}
	full, err := s.FullResult(ctx, "c_v3", "v3_read")
	if err != nil || full.FullText() != strings.Repeat("line of the old log\n", 200) {
		t.Errorf("full result of v3_read: %v", err)
	}
	reqs, err := s.Requests(ctx, "c_v3", 0)
	if err != nil || len(reqs) != 3 {
		t.Fatalf("requests: %+v, %v", reqs, err)
	}
	for _, q := range reqs {
		if q.Recorded || q.System != "" || q.Tools != nil {
			t.Errorf("request %d.%d of a v3 store: %+v", q.Turn, q.Round, q)
		}
	}
	testOldRoundsIdle(t, s, "c_v3")
	// Resumed, the new turn's requests are recorded.
	a := storefix.NewAgent(t, s, storefix.ToolModel(nil, nil))
	if _, err := a.Run(ctx, conv, "more?"); err != nil {
		t.Fatal(err)
	}
	reqs, err = s.Requests(ctx, "c_v3", 3)
	if err != nil || len(reqs) != 2 || !reqs[0].Recorded || reqs[0].System != "sys" || len(reqs[0].Tools) != 1 {
		t.Errorf("requests of the resumed turn: %+v, %v", reqs, err)
	}
}

// testOldRoundsIdle checks that the rounds of conversation id, stored
// before rounds were timed, load without an answer time, and that a new
// turn's first request counts its idle time from the end of the turn
// before, as it did before the times were stored.
func testOldRoundsIdle(t *testing.T, s *sqliteStore, id string) {
	t.Helper()
	ctx := context.Background()
	conv, err := s.Load(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for i := range conv.Turns {
		storefix.CheckAnswered(t, s, id, i+1, false)
	}
	now := conv.LastTurn().Ended.Add(7 * time.Minute)
	eng, err := harness.NewEngine(&harness.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := eng.BeginTurn(ctx, conv, "later")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := eng.View(ctx, conv, turn, nil, false, false); err != nil || v.Idle != 7*time.Minute {
		t.Errorf("first request after the old turns: Idle %s, %v; want 7m since the last turn ended", v.Idle, err)
	}
}

// TestUpgradeV4File opens testdata/v4.db, a store the schema-v4 code
// wrote through a real agent (testdata/README.md): it migrates, loads and
// resumes; its requests are still there; its collapse cut keeps Of but
// has no Refs (v4 did not store them), while a cut the resumed run makes
// keeps both of its sources.
func TestUpgradeV4File(t *testing.T) {
	ctx := context.Background()
	s := openCopy(t, "v4.db")
	conv, err := s.Load(ctx, "c_v4")
	if err != nil {
		t.Fatal(err)
	}
	if len(conv.Turns) != 2 || len(conv.Turns[0].Rounds) != 4 || !conv.Turns[0].Rounds[3].Final || conv.Turns[1].Answer() != "Only notes.txt." {
		t.Fatalf("c_v4 loads as %d turns", len(conv.Turns))
	}
	testOldRoundsIdle(t, s, "c_v4")
	old := conv.Turns[0].Rounds[2].Results[0]
	if old.CallID != "v4_c" || len(old.Cuts) != 1 || old.Cuts[0].By != guard.CollapseName || old.Cuts[0].Of != "v4_a" || old.Cuts[0].Refs != nil {
		t.Errorf("the v4 collapse cut loads as %+v", old.Cuts)
	}
	reqs, err := s.Requests(ctx, "c_v4", 0)
	if err != nil || len(reqs) != 6 {
		t.Fatalf("requests: %+v, %v", reqs, err)
	}
	wantTools := []int{2, 2, 2, 0, 1, 1} // turn 2's selection offers only list; the synthesis call none
	for i, q := range reqs {
		if !q.Recorded || q.System != "You are the agent of schema v4." || len(q.Tools) != wantTools[i] || q.Final != (i == 3) {
			t.Errorf("request %d.%d of the v4 store: %d tools, %+v", q.Turn, q.Round, len(q.Tools), q)
		}
	}
	// Resumed with the same reads, the new collapse cut keeps both sources.
	a, err := harness.New(storefix.ReadsModel([2]int{1, 30}, [2]int{31, 60}, [2]int{21, 50}), &harness.Options{
		Tools: []harness.Tool{storefix.ReadLinesTool(storefix.LineFile(80))}, Guards: []harness.Guard{(&guard.Collapse{}).Guard()}, Recorder: s,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(ctx, conv, "read again"); err != nil {
		t.Fatal(err)
	}
	full, err := s.FullResult(ctx, "c_v4", "read_3")
	if err != nil || len(full.Cuts) != 1 || !reflect.DeepEqual(full.Cuts[0].Refs, []string{"read_1", "read_2"}) {
		t.Errorf("the resumed run's collapse cut: %+v, %v", full, err)
	}
}

func mustTx(t *testing.T, db *sql.DB) *sql.Tx {
	t.Helper()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback() })
	return tx
}

func TestNewerSchemaRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "new.db")
	s, err := open(ctx, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_ns) VALUES (99, 'future', 0)`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(ctx, path, nil); err == nil || !strings.Contains(err.Error(), "newer than this harness") {
		t.Errorf("opening a newer schema: %v", err)
	}
}

// openCopy opens a copy of testdata/name and checks that it migrated to
// the current schema version.
func openCopy(t *testing.T, name string) *sqliteStore {
	t.Helper()
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := open(ctx, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var v int
	if err := s.r.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v); err != nil || v != schemaVersion() {
		t.Fatalf("version %d after opening, want %d (%v)", v, schemaVersion(), err)
	}
	return s
}

// checkUpgradedContext checks that an upgraded file keeps a new turn's
// context messages.
func checkUpgradedContext(t *testing.T, s *sqliteStore) {
	t.Helper()
	ctx := context.Background()
	conv := harness.NewConversation("c_new_context")
	want := []harness.ContextMessage{{Text: "<environment_context/>"}, {Text: "<skill/>", AfterInput: true}}
	turn := &harness.Turn{Index: 1, Input: "go", Context: want}
	if err := s.BeginTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	turn.Outcome = harness.Answered
	if err := s.EndTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, conv.ID)
	if err != nil || !reflect.DeepEqual(got.Turns[0].Context, want) {
		t.Errorf("context after upgrade: %+v, %v", got, err)
	}
}
