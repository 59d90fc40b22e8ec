package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

func openTemp(t testing.TB, opts *Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "sub", "harness.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// richConversation uses every field the transcript has.
func richConversation(id string, big int) *harness.Conversation {
	t0 := time.Unix(1_800_000_000, 123456789)
	full := strings.Repeat("line of the build log é\n", big/24+1)[:big]
	cut := &harness.ToolResult{
		CallID: "call_1", Tool: "shell",
		Parts: []harness.Part{harness.TextPart(full)},
		Model: []harness.Part{harness.TextPart(full[:100] + "\n[… spilled: 2 parts …]\n" + full[len(full)-50:])},
		Cuts: []harness.Cut{
			{Kind: harness.CutSpilled, By: "ceiling", BytesIn: len(full), BytesOut: 180, Locator: ".harness/spill/" + id + "/call_1-shell.txt"},
		},
		Bytes: len(full),
		Meta:  map[string]any{"exit_code": 2.0, "note": "failed"},
	}
	structured := &harness.ToolResult{
		CallID: "call_2", Tool: "mcp_query",
		Parts: []harness.Part{harness.TextPart("3 rows"), harness.ImagePart("image/png", []byte{0x89, 'P', 'N', 'G', 0}),
			harness.JSONPart(json.RawMessage("{ \"kept\" :  [1,\n 2] }")), harness.TextPart("invalid \xff\xfe UTF-8")},
		Structured: json.RawMessage(`{"rows":[1,2,3]}`),
	}
	structured.Bytes = structured.PayloadSize()
	return &harness.Conversation{
		ID: id,
		Turns: []*harness.Turn{
			{
				Index: 1, Input: "build it\nand tell me", Outcome: harness.Answered,
				Usage: harness.Usage{Input: 300, Cached: 100, Output: 40}, Started: t0, Ended: t0.Add(time.Second),
				Rounds: []*harness.Round{
					{
						Index: 1,
						Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("running")},
							ToolCalls: []harness.ToolCall{{ID: "call_1", Name: "shell", Args: json.RawMessage(`{"cmd":"make"}`)}, {ID: "call_2", Name: "mcp_query", Args: json.RawMessage(`{}`)}}},
						Results: []*harness.ToolResult{cut, structured},
						Usage:   harness.Usage{Input: 100, Output: 20},
						Stats:   harness.RequestStats{Messages: 2, Tools: 2, ToolBytes: 300},
					},
					{
						Index:     2,
						Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("it failed")}},
						Usage:     harness.Usage{Input: 200, Cached: 100, CacheWrite: 7, Output: 20},
						Stats:     harness.RequestStats{Messages: 5, EvidenceChars: 186, Tools: 2, ToolBytes: 300},
					},
				},
			},
			{
				Index: 2, Input: "again", Outcome: harness.RoundLimit, Started: t0.Add(time.Minute), Ended: t0.Add(2 * time.Minute),
				Rounds: []*harness.Round{
					{
						Index:     1,
						Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: "call_3", Name: "slow", Args: json.RawMessage(`not json`)}}},
						Results:   []*harness.ToolResult{{CallID: "call_3", Tool: "slow", Parts: []harness.Part{harness.TextPart("slow: timed out")}, IsError: true, TimedOut: true, Bytes: 15}},
					},
					{
						Index: 2, Final: true,
						Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("gave up")}},
						Dropped:   []harness.ToolCall{{ID: "call_4", Name: "slow", Args: json.RawMessage(`{}`)}},
					},
				},
			},
		},
		Notes: []*harness.Note{{After: 1, Text: "summary of turn 1", By: "compact"}, {After: 1, Text: "summary of turn 1", By: "compact", ClearTurn: 2, ClearRound: 1}},
	}
}

func jsonOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSaveLoadRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t, nil)
	conv := richConversation("c_rich", 5000)
	if err := s.Save(ctx, conv); err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadFull(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(conv, got) {
		t.Fatalf("LoadFull differs from what was saved:\n%#v\n---\n%#v", conv.Turns[1].Rounds[0], got.Turns[1].Rounds[0])
	}

	lazy, err := s.Load(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	cut := lazy.Turns[0].Rounds[0].Results[0]
	if !store.Partial(cut) || cut.Parts != nil || cut.Bytes != 5000 || len(cut.Cuts) != 1 || cut.Meta["note"] != "failed" {
		t.Errorf("cut result loaded as %+v, want its model copy, cuts and meta without the payload", cut)
	}
	if cut.ModelText() != conv.Turns[0].Rounds[0].Results[0].ModelText() {
		t.Errorf("model copy differs after Load")
	}
	whole := lazy.Turns[0].Rounds[0].Results[1]
	if store.Partial(whole) || !reflect.DeepEqual(whole, conv.Turns[0].Rounds[0].Results[1]) {
		t.Errorf("an uncut result must load whole: %+v", whole)
	}
	// Views from Load and LoadFull are identical: resuming needs no payload.
	v1 := harness.BuildView(lazy, nil, "sys", nil, false)
	v2 := harness.BuildView(got, nil, "sys", nil, false)
	if !reflect.DeepEqual(v1.Messages, v2.Messages) {
		t.Errorf("the view of a lazily loaded conversation differs from the full one")
	}
	// Nothing is lost: the full payload comes back by call id.
	full, err := store.Full(ctx, s, conv.ID, cut)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(full, conv.Turns[0].Rounds[0].Results[0]) {
		t.Errorf("FullResult differs from the saved result")
	}
	// Saving a lazily loaded conversation would store model copies as
	// payloads: refused.
	lazy.ID = "c_copy"
	if err := s.Save(ctx, lazy); err == nil || !strings.Contains(err.Error(), "LoadFull") {
		t.Errorf("Save of a lazily loaded conversation: err = %v", err)
	}
	if err := s.Save(ctx, conv); err == nil {
		t.Errorf("saving a conversation twice must fail")
	}
}

func TestNotFound(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t, nil)
	if err := s.Save(ctx, richConversation("c_1", 100)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Load: %v", err)
	}
	if _, err := s.FullResult(ctx, "c_1", "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("FullResult: %v", err)
	}
	if err := s.Delete(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Delete: %v", err)
	}
	if _, err := s.Calls(ctx, "nope", 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Calls: %v", err)
	}
}

func TestReusedCallIDs(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t, nil)
	conv := harness.NewConversation("c_reuse")
	turn := &harness.Turn{Index: 1, Input: "x"}
	for i, text := range []string{"first", "second"} {
		turn.Rounds = append(turn.Rounds, &harness.Round{Index: i + 1,
			Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: "call_0", Name: "t"}}},
			Results:   []*harness.ToolResult{{CallID: "call_0", Tool: "t", Parts: []harness.Part{harness.TextPart(text)}}}})
	}
	conv.Turns = []*harness.Turn{turn}
	if err := s.Save(ctx, conv); err != nil {
		t.Fatal(err)
	}
	res, err := s.FullResult(ctx, conv.ID, "call_0")
	if err != nil || res.FullText() != "second" {
		t.Errorf("FullResult of a reused id = %v, %v; want the newest", res, err)
	}
}

func TestBeginTurnRefusesStaleConversation(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t, nil)
	if err := s.Save(ctx, richConversation("c_1", 100)); err != nil {
		t.Fatal(err)
	}
	fresh := harness.NewConversation("c_1") // same id, not loaded
	err := s.BeginTurn(ctx, fresh, &harness.Turn{Index: 1, Input: "hi"})
	if err == nil || !strings.Contains(err.Error(), "next is 3") {
		t.Errorf("BeginTurn of turn 1 on a stored 2-turn conversation: %v", err)
	}
	if err := s.EndTurn(ctx, fresh, &harness.Turn{Index: 7}); err == nil {
		t.Errorf("EndTurn of a turn never begun must fail")
	}
}

func TestListAndDelete(t *testing.T) {
	ctx := context.Background()
	var deleted []string
	fail := false
	s := openTemp(t, &Options{OnDelete: func(ctx context.Context, id string) error {
		if fail {
			return errors.New("disk says no")
		}
		deleted = append(deleted, id)
		return nil
	}})
	for _, id := range []string{"c_a", "c_b"} {
		if err := s.Save(ctx, richConversation(id, 5000)); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("%d conversations listed", len(list))
	}
	sm := list[0]
	want := store.Summary{ID: sm.ID, Title: "build it", Created: time.Unix(1_800_000_000, 123456789), Updated: sm.Updated,
		Turns: 2, Rounds: 4, Calls: 3, ResultBytes: int64(5000 + richConversation("x", 5000).Turns[0].Rounds[0].Results[1].Bytes + 15),
		ModelBytes: int64(len(richConversation("x", 5000).Turns[0].Rounds[0].Results[0].ModelText()) + richConversation("x", 5000).Turns[0].Rounds[0].Results[1].Bytes + 15),
		Usage:      harness.Usage{Input: 300, Cached: 100, CacheWrite: 7, Output: 40}, Notes: 2}
	if jsonOf(t, sm) != jsonOf(t, want) {
		t.Errorf("summary:\n%s\nwant\n%s", jsonOf(t, sm), jsonOf(t, want))
	}

	fail = true
	if err := s.Delete(ctx, "c_a"); err == nil {
		t.Fatal("Delete must fail when its files cannot be removed")
	}
	if _, err := s.Load(ctx, "c_a"); err != nil {
		t.Fatalf("a failed Delete lost the conversation: %v", err)
	}
	fail = false
	if err := s.Delete(ctx, "c_a"); err != nil {
		t.Fatal(err)
	}
	if len(deleted) != 1 || deleted[0] != "c_a" {
		t.Errorf("OnDelete calls: %v", deleted)
	}
	if _, err := s.Load(ctx, "c_a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after Delete, Load: %v", err)
	}
	for _, table := range []string{"turns", "rounds", "messages", "tool_calls", "results", "result_bodies", "cuts", "notes", "events", "view_cuts"} {
		var n int
		if err := s.r.QueryRow(`SELECT COUNT(*) FROM ` + table + ` WHERE conv_id = 'c_a'`).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s keeps %d rows of a deleted conversation (%v)", table, n, err)
		}
	}
	if _, err := s.Load(ctx, "c_b"); err != nil {
		t.Errorf("Delete touched another conversation: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Open(ctx, "", nil); err == nil {
		t.Error("empty path accepted")
	}
	if _, err := Open(ctx, filepath.Join(t.TempDir(), "a?b.db"), nil); err == nil {
		t.Error("path with ? accepted")
	}
	notDB := filepath.Join(t.TempDir(), "not.db")
	if err := os.WriteFile(notDB, []byte(strings.Repeat("this is not a database\n", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, notDB, nil); err == nil {
		t.Error("a text file opened as a database")
	}
}

func TestEventsKeepInvalidArguments(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t, nil)
	s.Observe(harness.Event{Kind: harness.EventToolResult, Conversation: "c_e", Turn: 1, Round: 1,
		Call: &harness.ToolCall{ID: "x", Name: "t", Args: json.RawMessage("{not json")}, Data: map[string]any{"ratio": math.NaN(), "n": 3}})
	events, err := s.Events(ctx, "c_e", 0)
	if err != nil || s.EventErr() != nil {
		t.Fatal(err, s.EventErr())
	}
	if len(events) != 1 || string(events[0].Call.Args) != `"{not json"` || events[0].Data["ratio"] != "NaN" || events[0].Data["n"] != 3.0 {
		t.Errorf("event stored as %+v", events)
	}
}

func TestFileIsPrivate(t *testing.T) {
	s := openTemp(t, nil)
	st, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if m := st.Mode().Perm(); m != 0o600 {
		t.Errorf("database mode %v, want 0600 (transcripts hold whatever tools read)", m)
	}
	dir, _ := os.Stat(filepath.Dir(s.Path()))
	if m := dir.Mode().Perm(); m != 0o700 {
		t.Errorf("directory mode %v, want 0700", m)
	}
}
