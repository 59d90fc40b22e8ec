package postgres

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/codec"
	"github.com/agentharness/harness/store/internal/storefix"
)

// TestRequestsFromAnotherStore: two stores on one database stand for two
// proxy replicas serving one conversation alternately. The store that
// writes a round is never the one that wrote its request, and the request
// comes before its round (while the other store holds the conversation:
// it is not refused as busy), or after it (even after the turn has
// ended); every round loads with its own request all the same.
func TestRequestsFromAnotherStore(t *testing.T) {
	ctx := context.Background()
	dsn := server.DSN(t)
	stores := []*pgStore{openTest(t, dsn), openTest(t, dsn)}
	specs := storefix.Specs(storefix.GraphQLTools(3))
	const rounds = 3
	request := func(round int) *harness.Request {
		return &harness.Request{Turn: 1, Round: round, System: fmt.Sprintf("system of round %d", round), Tools: specs[:round]}
	}
	tests := []struct {
		name         string
		requestFirst bool
	}{
		{"request before its round", true},
		{"request after its round and the turn's end", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conv := harness.NewConversation(fmt.Sprintf("c_two_%v", tt.requestFirst))
			turn := &harness.Turn{Index: 1, Input: "go"}
			if err := stores[0].BeginTurn(ctx, conv, turn); err != nil {
				t.Fatal(err)
			}
			if err := stores[0].SuspendTurn(ctx, conv, turn); err != nil {
				t.Fatal(err)
			}
			addRequest := func(r int) {
				if err := stores[r%2].AddRequest(ctx, conv, turn, request(r)); err != nil {
					t.Fatal(err)
				}
			}
			for r := 1; r <= rounds; r++ {
				// The other store writes the round, as the replica the
				// next request reaches does.
				w := stores[(r+1)%2]
				if err := w.ResumeTurn(ctx, conv, turn); err != nil {
					t.Fatal(err)
				}
				if tt.requestFirst {
					addRequest(r) // while w holds the conversation
				}
				if err := w.AddRound(ctx, conv, turn, &harness.Round{Index: r, Assistant: harness.Message{Role: harness.RoleAssistant}}); err != nil {
					t.Fatal(err)
				}
				if r < rounds {
					if err := w.SuspendTurn(ctx, conv, turn); err != nil {
						t.Fatal(err)
					}
					continue
				}
				turn.Outcome = harness.Answered
				if err := w.EndTurn(ctx, conv, turn); err != nil {
					t.Fatal(err)
				}
			}
			if !tt.requestFirst {
				for r := rounds; r >= 1; r-- {
					addRequest(r)
				}
			}
			for i, s := range stores {
				reqs, err := s.Requests(ctx, conv.ID, 0)
				if err != nil {
					t.Fatal(err)
				}
				if len(reqs) != rounds {
					t.Fatalf("store %d: %d requests, want %d", i, len(reqs), rounds)
				}
				for _, q := range reqs {
					want := request(q.Round)
					if !q.Recorded || q.System != want.System || !reflect.DeepEqual(q.Tools, want.Tools) {
						t.Errorf("store %d: round %d loads with recorded=%v system %q tools %v; want %q, %v",
							i, q.Round, q.Recorded, q.System, q.ToolNames(), want.System, (&store.Request{Tools: want.Tools}).ToolNames())
					}
				}
			}
		})
	}
}

// TestSaveIgnoresEarlierRequests: requests stored under an id before a
// conversation of that id is saved (a request whose conversation was
// never stored, or was deleted as the request was written) are not the
// saved rounds' requests, and go with the conversation.
func TestSaveIgnoresEarlierRequests(t *testing.T) {
	ctx := context.Background()
	dsn := server.DSN(t)
	s := openTest(t, dsn)
	conv := harness.NewConversation("c_saved")
	if err := s.AddRequest(ctx, conv, &harness.Turn{Index: 1}, &harness.Request{Turn: 1, Round: 1, System: "stale"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, storefix.RichConversation("c_saved", 100)); err != nil {
		t.Fatal(err)
	}
	reqs, err := s.Requests(ctx, "c_saved", 0)
	if err != nil || len(reqs) == 0 {
		t.Fatalf("%d requests, %v", len(reqs), err)
	}
	for _, q := range reqs {
		if q.Recorded || q.System != "" {
			t.Errorf("saved round %d.%d: recorded=%v system %q", q.Turn, q.Round, q.Recorded, q.System)
		}
	}
	if err := s.AddRequest(ctx, conv, &harness.Turn{Index: 9}, &harness.Request{Turn: 9, Round: 1, System: "later"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "c_saved"); err != nil {
		t.Fatal(err)
	}
	if n, p := count(t, dsn, "round_requests", ""), count(t, dsn, "system_prompts", ""); n != 0 || p != 0 {
		t.Errorf("after the deletion: %d requests, %d system prompts; want none", n, p)
	}
}

// TestUpgradeKeepsRoundRequests writes a database at the schema version
// before round_requests, with a round whose request is kept in its row as
// that version kept it, then opens it with the current code: the old
// round loads with its request, new rounds with theirs (sharing the old
// prompt and list), and deleting the conversation leaves neither.
func TestUpgradeKeepsRoundRequests(t *testing.T) {
	ctx := context.Background()
	dsn := server.DSN(t)
	old, err := open(ctx, dsn, nil, requestsMigration.Version-1)
	if err != nil {
		t.Fatal(err)
	}
	old.Close()
	spec := harness.ToolSpec{Name: "Read", Description: "Read a file."}
	req := codec.NewRequest(&harness.Request{System: "You code.", Tools: []harness.ToolSpec{spec}})
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO system_prompts (hash, text, bytes) VALUES ($1, $2, $3)`, []any{req.SystemHash, []byte(req.System), len(req.System)}},
		{`INSERT INTO tool_schemas (hash, name, description, risk, bytes) VALUES ($1, $2, $3, 0, $4)`, []any{req.Hashes[0], []byte(spec.Name), []byte(spec.Description), req.Bytes[0]}},
		{`INSERT INTO tool_sets (hash, tools, bytes) VALUES ($1, 1, $2)`, []any{req.SetHash, req.SetBytes}},
		{`INSERT INTO tool_set_members (set_hash, pos, schema_hash) VALUES ($1, 1, $2)`, []any{req.SetHash, req.Hashes[0]}},
		{`INSERT INTO conversations (id, title, created_ns, updated_ns) VALUES ('c_old', 'old', 1000, 2000)`, nil},
		{`INSERT INTO turns (conv_id, idx, input) VALUES ('c_old', 1, 'go')`, nil},
		{`INSERT INTO rounds (conv_id, turn, idx, req_recorded, req_system, req_tool_set) VALUES ('c_old', 1, 1, true, $1, $2)`, []any{req.SystemHash, req.SetHash}},
	} {
		exec(t, dsn, q.sql, q.args...)
	}
	c := connect(t, dsn)
	_, err = c.Exec(ctx, `SELECT 1 FROM round_requests`)
	c.Close(ctx)
	if err == nil {
		t.Fatal("the old version has round_requests already: the test does not test an upgrade")
	}

	s := openTest(t, dsn)
	if n := count(t, dsn, "schema_migrations", ""); n != schemaVersion() {
		t.Errorf("%d migrations recorded after the upgrade, want %d", n, schemaVersion())
	}
	conv, err := s.Load(ctx, "c_old")
	if err != nil {
		t.Fatal(err)
	}
	turn := conv.Turns[0]
	if err := s.ResumeTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	if err := s.AddRequest(ctx, conv, turn, &harness.Request{Turn: 1, Round: 2, System: "You code.", Tools: []harness.ToolSpec{spec}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddRound(ctx, conv, turn, &harness.Round{Index: 2, Final: true, Assistant: harness.Message{Role: harness.RoleAssistant}}); err != nil {
		t.Fatal(err)
	}
	turn.Outcome = harness.Answered
	if err := s.EndTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	reqs, err := s.Requests(ctx, "c_old", 0)
	if err != nil || len(reqs) != 2 {
		t.Fatalf("%d requests, %v; want 2", len(reqs), err)
	}
	for _, q := range reqs {
		if !q.Recorded || q.System != "You code." || !reflect.DeepEqual(q.Tools, []harness.ToolSpec{spec}) || q.ToolSet != req.SetHash {
			t.Errorf("round %d: recorded=%v system %q tools %v (list %s)", q.Round, q.Recorded, q.System, q.ToolNames(), q.ToolSet)
		}
	}
	if p, l := count(t, dsn, "system_prompts", ""), count(t, dsn, "tool_sets", ""); p != 1 || l != 1 {
		t.Errorf("%d system prompts and %d tool lists stored, want the old one of each", p, l)
	}
	if err := s.Delete(ctx, "c_old"); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"system_prompts", "tool_sets", "tool_set_members", "tool_schemas", "round_requests"} {
		if n := count(t, dsn, table, ""); n != 0 {
			t.Errorf("%s keeps %d rows after the conversation was deleted", table, n)
		}
	}
}

// TestRequestAfterTurnConnectionLost: a request made after the connection
// of its turn died (its process's session ended, or the server restarted
// it) fails at most once, as pgx learns the connection is gone, then is
// stored on a pooled connection: it needs no lock.
func TestRequestAfterTurnConnectionLost(t *testing.T) {
	ctx := context.Background()
	dsn := server.DSN(t)
	s := openTest(t, dsn)
	conv := harness.NewConversation("c_lost_req")
	turn := &harness.Turn{Index: 1, Input: "go"}
	if err := s.BeginTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	exec(t, dsn, `SELECT pg_terminate_backend($1)`, int32(s.turnOf(conv.ID, nil).conn.Conn().PgConn().PID()))
	req := &harness.Request{Turn: 1, Round: 1, System: "sys"}
	if err := s.AddRequest(ctx, conv, turn, req); err != nil {
		t.Logf("the first try: %v", err)
		if err := s.AddRequest(ctx, conv, turn, req); err != nil {
			t.Fatalf("the second try: %v", err)
		}
	}
	if n := count(t, dsn, "round_requests", conv.ID); n != 1 {
		t.Errorf("%d requests stored, want 1", n)
	}
}
