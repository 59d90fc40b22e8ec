package postgres

import (
	"context"
	"reflect"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store/storetest"
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
	if n := count(t, dsn, "schema_migrations", ""); n != SchemaVersion() {
		t.Errorf("%d migrations recorded after the upgrade, want %d", n, SchemaVersion())
	}
	conv, err := s.Load(ctx, "c_old")
	if err != nil {
		t.Fatal(err)
	}
	if conv.Turns[0].Answer() != "nothing" || conv.Turns[0].Context != nil {
		t.Errorf("old turn loads as %+v", conv.Turns[0])
	}
	storetest.CheckAnswered(t, s, "c_old", 1, false)
	if _, err := storetest.NewAgent(t, s, storetest.ToolModel(nil, nil)).Run(ctx, conv, "and now?"); err != nil {
		t.Fatal(err)
	}
	storetest.CheckAnswered(t, s, "c_old", 2, true)
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
