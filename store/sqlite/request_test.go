package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// graphqlTools returns n tools shaped like a GraphQL server's: each with a
// description and an input schema of a few typed fields.
func graphqlTools(n int) []harness.Tool {
	tools := make([]harness.Tool, n)
	for i := range tools {
		name := fmt.Sprintf("query_entity_%02d", i+1)
		schema := fmt.Sprintf(`{"type":"object","properties":{"id":{"type":"string","description":"the id of entity %d"},`+
			`"fields":{"type":"array","items":{"type":"string"},"description":"fields of entity %d to return"},`+
			`"first":{"type":"integer","description":"page size"}},"required":["id"]}`, i+1, i+1)
		tools[i] = harness.Tool{
			Spec: harness.ToolSpec{Name: name, Description: fmt.Sprintf("Query entity type %d of the GraphQL API by id.", i+1),
				InputSchema: json.RawMessage(schema), Risk: harness.ReadOnly | harness.Network},
			Func: func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
				return harness.TextResult(`{"data":{"id":"1"}}`), nil
			},
		}
	}
	return tools
}

// callEveryRound asks for one call of tool in every round that offers
// tools and answers when they are withheld.
func callEveryRound(tool string) harness.ModelFunc {
	return func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		if len(req.Tools) == 0 {
			return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart("done")}}}, nil
		}
		return &harness.Response{Message: harness.Message{ToolCalls: []harness.ToolCall{
			{Name: tool, Args: json.RawMessage(`{"id":"1"}`)}}}}, nil
	}
}

func specsOf(tools []harness.Tool) []harness.ToolSpec {
	out := make([]harness.ToolSpec, len(tools))
	for i, t := range tools {
		out[i] = t.Spec
	}
	return out
}

func count(t testing.TB, s *Store, table string) int {
	t.Helper()
	var n int
	if err := s.r.QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRequestsRecorded runs two turns through the agent and reads back,
// round by round, the system prompt and the schemas each request sent:
// the synthesis call sent none, and a view policy that narrowed the list
// in one round shows in that round only.
func TestRequestsRecorded(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t, nil)
	tools := graphqlTools(3)
	// Round 2 of turn 1 is offered only the first tool.
	narrow := harness.ViewPolicyFunc(func(ctx context.Context, v *harness.View) error {
		if v.Turn.Index == 1 && v.Round == 2 {
			v.Tools = v.Tools[:1]
		}
		return nil
	})
	a, err := harness.New(callEveryRound("query_entity_01"), &harness.Options{
		System: "You query the API.", Tools: tools, MaxRounds: 2, Recorder: s, Policies: []harness.ViewPolicy{narrow},
	})
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("c_req")
	for _, in := range []string{"first", "second"} {
		if _, err := a.Run(ctx, conv, in); err != nil {
			t.Fatal(err)
		}
	}
	reqs, err := s.Requests(ctx, "c_req", 0)
	if err != nil {
		t.Fatal(err)
	}
	all := specsOf(tools)
	want := []struct {
		turn, round int
		tools       []harness.ToolSpec
		final       bool
	}{{1, 1, all, false}, {1, 2, all[:1], false}, {1, 3, nil, true}, {2, 1, all, false}, {2, 2, all, false}, {2, 3, nil, true}}
	if len(reqs) != len(want) {
		t.Fatalf("%d requests, want %d: %+v", len(reqs), len(want), reqs)
	}
	var stats []harness.RequestStats
	for _, turn := range conv.Turns {
		for _, r := range turn.Rounds {
			stats = append(stats, r.Stats)
		}
	}
	for i, w := range want {
		q := reqs[i]
		if q.Turn != w.turn || q.Round != w.round || q.Final != w.final || !q.Recorded {
			t.Errorf("request %d: %d.%d final=%v recorded=%v", i, q.Turn, q.Round, q.Final, q.Recorded)
		}
		if q.System != "You query the API." || q.SystemBytes != len("You query the API.") {
			t.Errorf("request %d: system %q (%d bytes)", i, q.System, q.SystemBytes)
		}
		if !reflect.DeepEqual(q.Tools, w.tools) {
			t.Errorf("request %d: tools %v, want %v", i, q.ToolNames(), (&store.Request{Tools: w.tools}).ToolNames())
		}
		// The figures the agent computed from the request it sent.
		if len(q.Tools) != stats[i].Tools || q.ToolBytes != stats[i].ToolBytes {
			t.Errorf("request %d: %d tools, %d bytes; the agent counted %d, %d", i, len(q.Tools), q.ToolBytes, stats[i].Tools, stats[i].ToolBytes)
		}
		if (q.ToolSet == "") != (len(w.tools) == 0) {
			t.Errorf("request %d: tool set %q", i, q.ToolSet)
		}
	}
	if reqs[0].ToolSet != reqs[3].ToolSet || reqs[0].ToolSet == reqs[1].ToolSet || &reqs[0].Tools[0] != &reqs[3].Tools[0] {
		t.Error("rounds sending the same list do not share it")
	}
	// Each distinct thing once: 3 schemas, 2 lists, 1 prompt.
	if n, m, p := count(t, s, "tool_schemas"), count(t, s, "tool_sets"), count(t, s, "system_prompts"); n != 3 || m != 2 || p != 1 {
		t.Errorf("stored %d schemas, %d lists, %d prompts; want 3, 2, 1", n, m, p)
	}
	// One turn only.
	if two, err := s.Requests(ctx, "c_req", 2); err != nil || len(two) != 3 || two[0].Turn != 2 || len(two[0].Tools) != 3 {
		t.Errorf("turn 2: %+v, %v", two, err)
	}
	if _, err := s.Requests(ctx, "c_nope", 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown conversation: %v", err)
	}
	left := s.requests.Len()
	if left != 0 {
		t.Errorf("%d requests still pending after the turns", left)
	}
}

// TestRequestsDeduplicated offers 84 tools over 8 rounds: the schemas are
// stored once, not 672 times, and a second conversation offering 20 of
// them adds one list and no schema. Deleting a conversation keeps what the
// other one still uses.
func TestRequestsDeduplicated(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t, nil)
	tools := graphqlTools(84)
	run := func(id string, tools []harness.Tool) {
		a, err := harness.New(callEveryRound(tools[0].Spec.Name), &harness.Options{System: "sys", Tools: tools, MaxRounds: 8, Recorder: s})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Run(ctx, harness.NewConversation(id), "go"); err != nil {
			t.Fatal(err)
		}
	}
	run("c_84", tools)
	reqs, err := s.Requests(ctx, "c_84", 0)
	if err != nil || len(reqs) != 9 {
		t.Fatalf("%d requests, %v", len(reqs), err)
	}
	sent, naive := 0, 0
	for _, q := range reqs[:8] {
		sent += len(q.Tools)
		naive += q.ToolBytes
	}
	if sent != 672 || len(reqs[8].Tools) != 0 {
		t.Fatalf("%d schemas sent over 8 rounds (final: %d)", sent, len(reqs[8].Tools))
	}
	var stored int
	if err := s.r.QueryRow(`SELECT SUM(bytes) FROM tool_schemas`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if n, m, members := count(t, s, "tool_schemas"), count(t, s, "tool_sets"), count(t, s, "tool_set_members"); n != 84 || m != 1 || members != 84 {
		t.Errorf("stored %d schemas, %d lists, %d members; want 84, 1, 84", n, m, members)
	}
	if stored*8 != naive {
		t.Errorf("schemas stored: %d bytes; sent: %d bytes (want 8×)", stored, naive)
	}
	t.Logf("84 tools × 8 rounds: %d schema bytes sent, %d stored (%d rows)", naive, stored, 84)

	run("c_20", tools[30:50])
	if n, m := count(t, s, "tool_schemas"), count(t, s, "tool_sets"); n != 84 || m != 2 {
		t.Errorf("after a second conversation: %d schemas, %d lists; want 84, 2", n, m)
	}
	if err := s.Delete(ctx, "c_84"); err != nil {
		t.Fatal(err)
	}
	if n, m, p := count(t, s, "tool_schemas"), count(t, s, "tool_sets"), count(t, s, "system_prompts"); n != 20 || m != 1 || p != 1 {
		t.Errorf("after deleting c_84: %d schemas, %d lists, %d prompts; want 20, 1, 1", n, m, p)
	}
	if reqs, err := s.Requests(ctx, "c_20", 0); err != nil || len(reqs[0].Tools) != 20 || reqs[0].Tools[0].Name != "query_entity_31" {
		t.Errorf("c_20 after deleting c_84: %v", err)
	}
	if err := s.Delete(ctx, "c_20"); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"tool_schemas", "tool_sets", "tool_set_members", "system_prompts"} {
		if n := count(t, s, table); n != 0 {
			t.Errorf("%s keeps %d rows after every conversation was deleted", table, n)
		}
	}
}

// TestRequestsOfAFailedCall: a request whose model call failed produces no
// round and is not kept; the next turn records normally.
func TestRequestsOfAFailedCall(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t, nil)
	fail := true
	model := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		if fail {
			return nil, errors.New("provider down")
		}
		return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart("ok")}}}, nil
	})
	a, err := harness.New(model, &harness.Options{System: "sys", Tools: graphqlTools(2), Recorder: s})
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("c_fail")
	if _, err := a.Run(ctx, conv, "one"); err == nil {
		t.Fatal("the failing model did not fail the turn")
	}
	left := s.requests.Len()
	if left != 0 {
		t.Errorf("%d requests left pending by a failed turn", left)
	}
	fail = false
	if _, err := a.Run(ctx, conv, "two"); err != nil {
		t.Fatal(err)
	}
	reqs, err := s.Requests(ctx, "c_fail", 0)
	if err != nil || len(reqs) != 1 || reqs[0].Turn != 2 || len(reqs[0].Tools) != 2 || !reqs[0].Recorded {
		t.Errorf("requests %+v, %v", reqs, err)
	}
}

// TestSavedConversationHasNoRequests: Save stores a transcript, which
// holds no requests; its rounds say so.
func TestSavedConversationHasNoRequests(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t, nil)
	if err := s.Save(ctx, richConversation("c_saved", 100)); err != nil {
		t.Fatal(err)
	}
	reqs, err := s.Requests(ctx, "c_saved", 0)
	if err != nil || len(reqs) == 0 {
		t.Fatalf("%d requests, %v", len(reqs), err)
	}
	for _, q := range reqs {
		if q.Recorded || q.System != "" || q.Tools != nil {
			t.Errorf("saved round %d.%d: %+v", q.Turn, q.Round, q)
		}
	}
}

// TestRequestsDamagedStore: a round that refers to a list or a prompt the
// store lost is an error naming it, not a request without tools.
func TestRequestsDamagedStore(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ sql, want string }{
		{`DELETE FROM tool_set_members WHERE pos = 2`, "does not hold whole"},
		{`DELETE FROM tool_sets`, "does not hold whole"},
		{`DELETE FROM system_prompts`, "system prompt"},
		{`UPDATE tool_schemas SET risk = 4096`, "not a set of risk flags"},
	} {
		s := openTemp(t, nil)
		a, err := harness.New(callEveryRound("query_entity_01"), &harness.Options{System: "sys", Tools: graphqlTools(2), MaxRounds: 1, Recorder: s})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Run(ctx, harness.NewConversation("c_dmg"), "go"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.w.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
			t.Fatal(err)
		}
		if _, err := s.w.ExecContext(ctx, c.sql); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Requests(ctx, "c_dmg", 0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("after %s: %v", c.sql, err)
		}
	}
}
