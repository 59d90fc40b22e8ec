package storetest

import (
	"context"
	"errors"
	"fmt"
	"github.com/agentharness/harness/store/internal/storefix"
	"reflect"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// testRequestsRecorded runs two turns through the agent and reads back,
// round by round, the system prompt and the schemas each request sent:
// the synthesis call sent none, and a view policy that narrowed the list
// in one round shows in that round only.
func testRequestsRecorded(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	tools := storefix.GraphQLTools(3)
	narrow := harness.ViewPolicyFunc(func(ctx context.Context, v *harness.View) error {
		if v.Turn.Index == 1 && v.Round == 2 {
			v.Tools = v.Tools[:1]
		}
		return nil
	})
	a, err := harness.New(storefix.CallEveryRound("query_entity_01"), &harness.Options{
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
	all := storefix.Specs(tools)
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
	if n, m, p := be.Count(t, "tool_schemas", ""), be.Count(t, "tool_sets", ""), be.Count(t, "system_prompts", ""); n != 3 || m != 2 || p != 1 {
		t.Errorf("stored %d schemas, %d lists, %d prompts; want 3, 2, 1", n, m, p)
	}
	if two, err := s.Requests(ctx, "c_req", 2); err != nil || len(two) != 3 || two[0].Turn != 2 || len(two[0].Tools) != 3 {
		t.Errorf("turn 2: %+v, %v", two, err)
	}
}

// testRequestsDeduplicated offers 84 tools over 8 rounds: the schemas are
// stored once, not 672 times, and a second conversation offering 20 of
// them adds one list and no schema. Deleting a conversation keeps what the
// other one still uses.
func testRequestsDeduplicated(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	tools := storefix.GraphQLTools(84)
	run := func(id string, tools []harness.Tool) {
		a, err := harness.New(storefix.CallEveryRound(tools[0].Spec.Name), &harness.Options{System: "sys", Tools: tools, MaxRounds: 8, Recorder: s})
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
	sent := 0
	for _, q := range reqs[:8] {
		sent += len(q.Tools)
	}
	if sent != 672 || len(reqs[8].Tools) != 0 {
		t.Fatalf("%d schemas sent over 8 rounds (final: %d)", sent, len(reqs[8].Tools))
	}
	if n, m, members := be.Count(t, "tool_schemas", ""), be.Count(t, "tool_sets", ""), be.Count(t, "tool_set_members", ""); n != 84 || m != 1 || members != 84 {
		t.Errorf("stored %d schemas, %d lists, %d members; want 84, 1, 84", n, m, members)
	}
	run("c_20", tools[30:50])
	if n, m := be.Count(t, "tool_schemas", ""), be.Count(t, "tool_sets", ""); n != 84 || m != 2 {
		t.Errorf("after a second conversation: %d schemas, %d lists; want 84, 2", n, m)
	}
	if err := s.Delete(ctx, "c_84"); err != nil {
		t.Fatal(err)
	}
	if n, m, p := be.Count(t, "tool_schemas", ""), be.Count(t, "tool_sets", ""), be.Count(t, "system_prompts", ""); n != 20 || m != 1 || p != 1 {
		t.Errorf("after deleting c_84: %d schemas, %d lists, %d prompts; want 20, 1, 1", n, m, p)
	}
	if reqs, err := s.Requests(ctx, "c_20", 0); err != nil || len(reqs[0].Tools) != 20 || reqs[0].Tools[0].Name != "query_entity_31" {
		t.Errorf("c_20 after deleting c_84: %v", err)
	}
	if err := s.Delete(ctx, "c_20"); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"tool_schemas", "tool_sets", "tool_set_members", "system_prompts"} {
		if n := be.Count(t, table, ""); n != 0 {
			t.Errorf("%s keeps %d rows after every conversation was deleted", table, n)
		}
	}
}

// testRequestsOfAFailedCall: a request whose model call failed produces no
// round and is not stored; the next turn records normally.
func testRequestsOfAFailedCall(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	fail := true
	model := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		if fail {
			return nil, errors.New("provider down")
		}
		return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart("ok")}}}, nil
	})
	a, err := harness.New(model, &harness.Options{System: "sys", Tools: storefix.GraphQLTools(2), Recorder: s})
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("c_fail")
	if _, err := a.Run(ctx, conv, "one"); err == nil {
		t.Fatal("the failing model did not fail the turn")
	}
	fail = false
	if _, err := a.Run(ctx, conv, "two"); err != nil {
		t.Fatal(err)
	}
	reqs, err := s.Requests(ctx, "c_fail", 0)
	if err != nil || len(reqs) != 1 || reqs[0].Turn != 2 || len(reqs[0].Tools) != 2 || !reqs[0].Recorded {
		t.Errorf("requests %+v, %v", reqs, err)
	}
	if got, err := s.Load(ctx, "c_fail"); err != nil || got.Turns[0].Outcome != harness.Error || len(got.Turns[0].Rounds) != 0 {
		t.Errorf("the failed turn is stored as %+v, %v", got.Turns[0], err)
	}
}

// testSavedConversationHasNoRequests: Save stores a transcript, which
// holds no requests; its rounds say so.
func testSavedConversationHasNoRequests(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	if err := s.Save(ctx, storefix.RichConversation("c_saved", 100)); err != nil {
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

// testToolSpecsByteForByte checks that tool schemas a request sends come
// back byte for byte with their risk (invalid UTF-8, NUL, schemas that are
// not JSON, empty fields), once however often they are sent.
func testToolSpecsByteForByte(t *testing.T, be *Backend) {
	s := be.open(t, nil)
	cases := []struct {
		spec   harness.ToolSpec
		system string
	}{
		{harness.ToolSpec{Name: "read_file", Description: "Read a file.", InputSchema: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`), Risk: harness.ReadOnly}, "You code."},
		{harness.ToolSpec{}, ""},
		{harness.ToolSpec{Name: "\xff\xfe", Description: "desc \x00 with NUL", InputSchema: []byte("not json \xfe"), Risk: 0xff}, "sys \xc3"},
		{harness.ToolSpec{Name: "a", Description: "b", InputSchema: []byte(" { } "), Risk: harness.Destructive | harness.Network}, strings.Repeat("long prompt ", 500)},
		{harness.ToolSpec{Name: `back\slash \x00`, Description: `\\x41`}, `\000`},
	}
	for n, c := range cases {
		storefix.ToolSpecRoundTrip(t, s, fmt.Sprintf("c_spec_%d", n), c.spec, c.system)
	}
}

// testRequestsByRound records requests through the store's methods, as a
// driver does: a request retried for the same round replaces the one
// before it, a request that sends nothing (a final round's) is recorded
// as such, and a request whose model call failed is not reported, nor
// attached to a later round. Deleting the conversation leaves nothing of
// what its requests sent, the replaced ones included.
func testRequestsByRound(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	specs := storefix.Specs(storefix.GraphQLTools(3))
	conv := harness.NewConversation("c_rounds")
	type write struct {
		round  int
		system string
		tools  []harness.ToolSpec
		stored bool // the model answered: its round is stored
	}
	turns := []struct {
		writes  []write
		outcome harness.Outcome
	}{
		{[]write{{1, "first try", specs, false}, {1, "sys", specs[:1], true}, {2, "", nil, true}}, harness.Answered},
		{[]write{{1, "sys", specs[1:], false}}, harness.Error},
		{[]write{{1, "sys", specs[2:], true}}, harness.Answered},
	}
	for ti, tt := range turns {
		turn := &harness.Turn{Index: ti + 1, Input: "go"}
		if err := s.BeginTurn(ctx, conv, turn); err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.writes {
			req := &harness.Request{System: w.system, Tools: w.tools, Turn: turn.Index, Round: w.round}
			if err := s.AddRequest(ctx, conv, turn, req); err != nil {
				t.Fatal(err)
			}
			if !w.stored {
				continue
			}
			r := &harness.Round{Index: w.round, Final: w.tools == nil, Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("ok")}}}
			if err := s.AddRound(ctx, conv, turn, r); err != nil {
				t.Fatal(err)
			}
			turn.Rounds = append(turn.Rounds, r)
		}
		turn.Outcome = tt.outcome
		if err := s.EndTurn(ctx, conv, turn); err != nil {
			t.Fatal(err)
		}
		conv.Turns = append(conv.Turns, turn)
	}
	reqs, err := s.Requests(ctx, conv.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		turn, round int
		system      string
		tools       []harness.ToolSpec
	}{{1, 1, "sys", specs[:1]}, {1, 2, "", nil}, {3, 1, "sys", specs[2:]}}
	if len(reqs) != len(want) {
		t.Fatalf("%d requests, want %d: %+v", len(reqs), len(want), reqs)
	}
	for i, w := range want {
		q := reqs[i]
		if q.Turn != w.turn || q.Round != w.round || !q.Recorded || q.System != w.system || !reflect.DeepEqual(q.Tools, w.tools) {
			t.Errorf("request %d: turn %d round %d recorded=%v system %q tools %v; want turn %d round %d, system %q tools %v",
				i, q.Turn, q.Round, q.Recorded, q.System, q.ToolNames(), w.turn, w.round, w.system, (&store.Request{Tools: w.tools}).ToolNames())
		}
	}
	if err := s.Delete(ctx, conv.ID); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"tool_schemas", "tool_sets", "tool_set_members", "system_prompts"} {
		if n := be.Count(t, table, ""); n != 0 {
			t.Errorf("%s keeps %d rows after the conversation was deleted", table, n)
		}
	}
}
