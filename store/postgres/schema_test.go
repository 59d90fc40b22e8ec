package postgres

import (
	"context"
	"github.com/agentharness/harness/store/internal/storefix"
	"reflect"
	"slices"
	"testing"

	"github.com/agentharness/harness"
)

// TestUpgradeFromV1 writes a database at schema version 1, with rows as
// that version knew them, then opens it with the current code: the later
// steps apply, the old rounds load without an answer time and the
// upgraded database takes new turns whose rounds carry theirs.
func TestUpgradeFromV1(t *testing.T) {
	ctx := context.Background()
	dsn := server.DSN(t)
	old, err := open(ctx, dsn, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	old.Close()
	for _, q := range []string{
		`INSERT INTO conversations (id, title, created_ns, updated_ns) VALUES ('c_old', 'old', 1000, 2000)`,
		`INSERT INTO turns (conv_id, idx, input, outcome, started_ns, ended_ns, input_tokens, output_tokens)
		 VALUES ('c_old', 1, 'what changed?', 'answered', 1000, 2000, 50, 5)`,
		`INSERT INTO rounds (conv_id, turn, idx, input_tokens, output_tokens) VALUES ('c_old', 1, 1, 20, 2)`,
		`INSERT INTO messages (conv_id, turn, round, role, parts) VALUES ('c_old', 1, 1, 'assistant', '[{"type":"text","text":"nothing"}]')`,
	} {
		exec(t, dsn, q)
	}
	c := connect(t, dsn)
	_, err = c.Exec(ctx, `SELECT answered_ns FROM rounds`)
	c.Close(ctx)
	if err == nil {
		t.Fatal("version 1 already times rounds: the test does not test an upgrade")
	}

	s := openTest(t, dsn)
	if n := count(t, dsn, "schema_migrations", ""); n != schemaVersion() {
		t.Errorf("%d migrations recorded after the upgrade, want %d", n, schemaVersion())
	}
	conv, err := s.Load(ctx, "c_old")
	if err != nil {
		t.Fatal(err)
	}
	if conv.Turns[0].Answer() != "nothing" || conv.Turns[0].Context != nil {
		t.Errorf("old turn loads as %+v", conv.Turns[0])
	}
	storefix.CheckAnswered(t, s, "c_old", 1, false)
	if _, err := storefix.NewAgent(t, s, storefix.ToolModel(nil, nil)).Run(ctx, conv, "and now?"); err != nil {
		t.Fatal(err)
	}
	storefix.CheckAnswered(t, s, "c_old", 2, true)
	// The new turn's context is kept.
	conv, err = s.Load(ctx, "c_old")
	if err != nil {
		t.Fatal(err)
	}
	want := []harness.ContextMessage{{Text: "<environment_context/>"}, {Text: "<skill/>", AfterInput: true}}
	turn := &harness.Turn{Index: 3, Input: "go", Context: want}
	if err := s.BeginTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	turn.Outcome = harness.Answered
	if err := s.EndTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load(ctx, "c_old"); err != nil || !reflect.DeepEqual(got.Turns[2].Context, want) || got.Turns[0].Context != nil {
		t.Errorf("context after upgrade: %+v, %v", got, err)
	}
}

// TestUpgradeFromV3 writes a database at schema version 3 with events and
// a view cut as that version stored them (no keys), then opens it with the
// current code: the old rows are kept and read back, and new events,
// even ones equal to the old, are stored beside them, each once.
func TestUpgradeFromV3(t *testing.T) {
	ctx := context.Background()
	dsn := server.DSN(t)
	old, err := open(ctx, dsn, nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	old.Close()
	body := `{"kind":"policy","time":"2026-01-02T03:04:05Z","conversation":"c_old","turn":1,"detail":"old"}`
	exec(t, dsn, `INSERT INTO events (conv_id, turn, round, kind, time_ns, body) VALUES ('c_old', 1, 1, 'policy', 1000, $1), ('c_old', 1, 1, 'policy', 1000, $1)`, []byte(body))
	exec(t, dsn, `INSERT INTO view_cuts (conv_id, turn, request, call_id, kind, bytes_in, bytes_out) VALUES ('c_old', 1, 2, 'call_1', 'trimmed', 90, 10)`)
	c := connect(t, dsn)
	_, err = c.Exec(ctx, `SELECT event_key FROM events`)
	c.Close(ctx)
	if err == nil {
		t.Fatal("version 3 already keys events: the test does not test an upgrade")
	}

	s := openTest(t, dsn)
	if n := count(t, dsn, "schema_migrations", ""); n != schemaVersion() {
		t.Errorf("%d migrations recorded after the upgrade, want %d", n, schemaVersion())
	}
	for range 2 {
		s.Observe(harness.Event{Kind: harness.EventPolicy, Conversation: "c_old", Turn: 1, Detail: "new"})
	}
	s.Observe(harness.Event{Kind: harness.EventPolicy, Conversation: "c_old", Turn: 1, Detail: "old"})
	events, err := s.Events(ctx, "c_old", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := details(events), []string{"old", "old", "new", "new", "old"}; !slices.Equal(got, want) {
		t.Errorf("events after the upgrade: %q, want %q", got, want)
	}
	if n := count(t, dsn, "view_cuts", "c_old"); n != 1 {
		t.Errorf("%d view cuts after the upgrade, want the old one", n)
	}
}
