package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
)

// lineFile is a file of n distinct lines long enough to start a collapsed
// block (guard.Collapse ignores short lines).
func lineFile(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %03d of the notes the agent reads twice", i+1)
	}
	return lines
}

// readLinesTool reads lines from..to of file.
func readLinesTool(file []string) harness.Tool {
	return harness.Tool{
		Spec: harness.ToolSpec{Name: "read_lines", Description: "Read lines from..to.", Risk: harness.ReadOnly,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"from":{"type":"integer"},"to":{"type":"integer"}},"required":["from","to"]}`)},
		Func: func(_ context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			var a struct{ From, To int }
			if err := json.Unmarshal(call.Args, &a); err != nil {
				return nil, err
			}
			return harness.TextResult(strings.Join(file[a.From-1:a.To], "\n")), nil
		},
	}
}

// readsModel asks for one read_lines call per round, ranges[i] in round
// i+1, then answers.
func readsModel(ranges ...[2]int) harness.ModelFunc {
	return func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		if i := req.Round - 1; i < len(ranges) && !req.Final {
			return &harness.Response{Message: harness.Message{ToolCalls: []harness.ToolCall{{
				ID: fmt.Sprintf("read_%d", req.Round), Name: "read_lines", Args: json.RawMessage(fmt.Sprintf(`{"from":%d,"to":%d}`, ranges[i][0], ranges[i][1])),
			}}}, Usage: harness.Usage{Input: 100, Output: 5}}, nil
		}
		return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart("done")}}, Usage: harness.Usage{Input: 100, Output: 3}}, nil
	}
}

// TestCutRefsSurviveReopen runs a real agent whose third read spans the
// first two: guard.Collapse points its model copy at both (Cut.Refs has
// two calls). After the store is closed and reopened, every way of reading
// cuts gives back the cuts the run made, Refs included.
func TestCutRefsSurviveReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "harness.db")
	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := harness.New(readsModel([2]int{1, 30}, [2]int{31, 60}, [2]int{21, 50}), &harness.Options{
		Tools: []harness.Tool{readLinesTool(lineFile(80))}, Guards: []harness.Guard{(&guard.Collapse{}).Guard()}, Recorder: s,
	})
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("c_refs")
	if _, err := a.Run(ctx, conv, "read the notes"); err != nil {
		t.Fatal(err)
	}
	live := conv.Turns[0].Rounds[2].Results[0]
	if len(live.Cuts) != 1 || !reflect.DeepEqual(live.Cuts[0].Refs, []string{"read_1", "read_2"}) {
		t.Fatalf("the third read was not collapsed onto both earlier reads: %+v", live.Cuts)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	liveCuts := cutsByCall(conv)
	for name, load := range map[string]func(context.Context, string) (*harness.Conversation, error){"Load": s.Load, "LoadFull": s.LoadFull} {
		got, err := load(ctx, conv.ID)
		if err != nil {
			t.Fatal(err)
		}
		if g := cutsByCall(got); !reflect.DeepEqual(g, liveCuts) {
			t.Errorf("%s: cuts %+v, the run made %+v", name, g, liveCuts)
		}
	}
	full, err := s.FullResult(ctx, conv.ID, "read_3")
	if err != nil || !reflect.DeepEqual(full.Cuts, live.Cuts) {
		t.Errorf("FullResult: cuts %+v (%v), the run made %+v", full.Cuts, err, live.Cuts)
	}
	calls, err := s.Calls(ctx, conv.ID, 0)
	if err != nil || len(calls) != 3 {
		t.Fatalf("Calls: %d, %v", len(calls), err)
	}
	for _, c := range calls {
		if !reflect.DeepEqual(c.Cuts, liveCuts[c.CallID]) {
			t.Errorf("Calls: %s has cuts %+v, the run made %+v", c.CallID, c.Cuts, liveCuts[c.CallID])
		}
	}
}

func cutsByCall(conv *harness.Conversation) map[string][]harness.Cut {
	out := map[string][]harness.Cut{}
	for _, t := range conv.Turns {
		for _, r := range t.Rounds {
			for _, res := range r.Results {
				out[res.CallID] = res.Cuts
			}
		}
	}
	return out
}

// TestCutRefsByteForByte saves cuts whose Refs are nil, empty, and call
// ids no JSON string could carry as they are (invalid UTF-8, NUL, a quote):
// they load exactly as saved.
func TestCutRefsByteForByte(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t, nil)
	refs := [][]string{nil, {}, {"call_a", "call_b"}, {"\xff\xfe", "x\x00y", `"quoted"`, "é🙂", "", "<&>"}}
	round := &harness.Round{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant}}
	for i, r := range refs {
		id := fmt.Sprintf("c%d", i)
		round.Assistant.ToolCalls = append(round.Assistant.ToolCalls, harness.ToolCall{ID: id, Name: "read", Args: json.RawMessage(`{}`)})
		round.Results = append(round.Results, &harness.ToolResult{CallID: id, Tool: "read", Parts: []harness.Part{harness.TextPart("full " + id)},
			Model: []harness.Part{harness.TextPart("[collapsed]")}, Bytes: 6 + len(id),
			Cuts: []harness.Cut{{Kind: harness.CutDeduped, By: "collapse", BytesIn: 6 + len(id), BytesOut: 11, Locator: "call:" + id, Of: first(r), Refs: r}}})
	}
	conv := &harness.Conversation{ID: "c_bytes", Turns: []*harness.Turn{{Index: 1, Input: "q", Rounds: []*harness.Round{round}}}}
	if err := s.Save(ctx, conv); err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadFull(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, res := range got.Turns[0].Rounds[0].Results {
		if want := refs[i]; !reflect.DeepEqual(res.Cuts[0].Refs, want) {
			t.Errorf("refs %d: got %#v, saved %#v", i, res.Cuts[0].Refs, want)
		}
	}
	// The common case is plain JSON that SQLite itself reads.
	var ids string
	if err := s.r.QueryRowContext(ctx, `SELECT group_concat(j.value, ',') FROM cuts, json_each(cuts.refs) j WHERE conv_id = 'c_bytes' AND seq = 3`).Scan(&ids); err != nil || ids != "call_a,call_b" {
		t.Errorf("json_each over refs: %q, %v", ids, err)
	}
}

func first(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}
