package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/provider/scripted"
	"github.com/agentharness/harness/tokens"
)

func TestRereadCall(t *testing.T) {
	for _, c := range []struct {
		name, tool, args string
		want             bool
	}{
		{"the recall tool", "recall", `{"call_id":"call_1"}`, true},
		{"a spill locator", "read_file", `{"path":".harness/spill/conv/call_1.txt","offset":40}`, true},
		{"an absolute spill path", "Read", `{"file_path":"/home/me/proj/.harness/spill/conv/call_1.txt"}`, true},
		{"a Windows spill path", "Read", `{"file_path":"C:\\proj\\.harness\\spill\\conv\\call_1.txt"}`, true},
		{"a grep of a spill file", "bash", `{"command":"grep -n Error .harness/spill/conv/call_1.txt"}`, true},
		{"a source file", "Read", `{"file_path":"/home/me/proj/spill.go"}`, false},
		{"the spill folder's parent", "bash", `{"command":"ls .harness"}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := rereadCall(&harness.ToolCall{Name: c.tool, Args: json.RawMessage(c.args)}); got != c.want {
				t.Fatalf("rereadCall = %v, want %v", got, c.want)
			}
		})
	}
}

// rereadConv is compactConv's one turn of reads, the first cut at arrival
// (every later request saves on it), then a round answered with call
// alone and a last read.
func rereadConv(call harness.ToolCall) *harness.Conversation {
	conv := compactConv([]int{4}, 400)
	turn := conv.Turns[0]
	turn.Rounds[0].Results[0].Model = []harness.Part{harness.TextPart("cut")}
	page := &harness.ToolResult{CallID: call.ID, Tool: call.Name, Parts: []harness.Part{harness.TextPart(filler(7, 600))}}
	page.Bytes = page.PayloadSize()
	re := &harness.Round{Index: 3, Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{call}}, Results: []*harness.ToolResult{page}}
	last := turn.Rounds[3]
	turn.Rounds = append(turn.Rounds[:2], re, turn.Rounds[2], last)
	for i, r := range turn.Rounds {
		r.Index = i + 1
	}
	return conv
}

// bankThrough books every request of conv's one turn, as the policy does
// request after request, and returns the bank before the last one.
func bankThrough(t *testing.T, conv *harness.Conversation, charge bool) []float64 {
	t.Helper()
	counter := tokens.NewCache(o200k(t), nil)
	var b books
	turn := conv.Turns[0]
	all := turn.Rounds
	defer func() { turn.Rounds = all }()
	var k *bank
	for i := 0; i <= len(all); i++ {
		turn.Rounds = all[:i]
		v := harness.BuildView(conv, turn, "sys", nil, false)
		k = b.open(conv, requestsSoFar(v), counter, defaultCompactPrices(), charge, charge && answeredWithRereads(v))
		k.book(v)
	}
	return k.saved
}

// TestCompactBankChargesRereads: with ChargeRereads the bank books a
// request the agent answered with re-reads alone at its whole price, and
// every later request pays for the pages it carries; a bank that does not
// charge them, or a round of an ordinary read, is booked as before.
func TestCompactBankChargesRereads(t *testing.T) {
	for _, c := range []struct {
		name    string
		call    harness.ToolCall
		charged bool
	}{
		{"recall", harness.ToolCall{ID: "re_1", Name: "recall", Args: json.RawMessage(`{"call_id":"call_t1_r1"}`)}, true},
		{"a spill file", harness.ToolCall{ID: "re_1", Name: "read", Args: json.RawMessage(`{"path":".harness/spill/conv/call_t1_r1.txt"}`)}, true},
		{"an ordinary read", harness.ToolCall{ID: "re_1", Name: "read", Args: json.RawMessage(`{"path":"notes.txt"}`)}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			off := bankThrough(t, rereadConv(c.call), false)
			on := bankThrough(t, rereadConv(c.call), true)
			for i, p := range defaultCompactPrices() {
				if off[i] <= 0 {
					t.Fatalf("under %s the cut saved %.1f without the charge", p.Name, off[i])
				}
				// The re-read (a request of the whole prefix, a page in two
				// later requests) costs more than the cut saved.
				if charged := on[i] < 0; charged != c.charged || (!c.charged && on[i] != off[i]) {
					t.Errorf("under %s the bank is %.1f charged, %.1f not: want charged %v", p.Name, on[i], off[i], c.charged)
				}
			}
		})
	}
}

// The bank leaves a re-read round out of keeping everything's request,
// calls and results, and keeps the rest of a mixed round's message.
func TestCompactBankKeepAllLeavesRereadsOut(t *testing.T) {
	call := harness.ToolCall{ID: "re_1", Name: "recall", Args: json.RawMessage(`{"call_id":"call_t1_r1"}`)}
	conv := rereadConv(call)
	mixed := conv.Turns[0].Rounds[2]
	mixed.Assistant.ToolCalls = append(mixed.Assistant.ToolCalls, harness.ToolCall{ID: "other", Name: "read", Args: json.RawMessage(`{"path":"x"}`)})
	mixed.Results = append(mixed.Results, &harness.ToolResult{CallID: "other", Tool: "read", Parts: []harness.Part{harness.TextPart("x")}})
	v := harness.BuildView(conv, conv.Turns[0], "sys", nil, false)
	for _, charge := range []bool{false, true} {
		var b books
		k := b.open(conv, 1, tokens.NewCache(o200k(t), nil), defaultCompactPrices(), charge, false)
		var ids []string
		for _, m := range k.keepAll(v).Messages {
			for _, tc := range m.ToolCalls {
				ids = append(ids, tc.ID)
			}
			if m.Role == harness.RoleTool {
				ids = append(ids, "result:"+m.ToolCallID)
			}
		}
		if want := !charge; slices.Contains(ids, "re_1") != want || slices.Contains(ids, "result:re_1") != want ||
			!slices.Contains(ids, "other") || !slices.Contains(ids, "result:other") {
			t.Errorf("charge %v: keeping everything's calls and results %v", charge, ids)
		}
	}
}

// TestCompactChargeRereadsHoldsClears runs an agent that reads a part,
// then reads a page of a spill file back, over and over: the ceiling shows
// a third of each part, but every page read back is as large as a part.
// The bank that prices keeping everything with the re-reads in it sees
// savings and clears for cost; charged with them (ChargeRereads), it sees
// the pages cost more than the cuts saved, and holds every clear.
func TestCompactChargeRereadsHoldsClears(t *testing.T) {
	const n, size = 16, 1500
	read := harness.Tool{
		Spec: harness.ToolSpec{Name: "read", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			return harness.TextResult(filler(len(c.Args)*31+int(c.Args[len(c.Args)-3]), size)), nil
		},
	}
	// The ceiling: a third of each part; a page read back is shown whole.
	cut := func(next harness.ToolFunc) harness.ToolFunc {
		return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			if strings.Contains(string(call.Args), "spill") {
				return next(ctx, call)
			}
			return thirdOf(next)(ctx, call)
		}
	}
	var steps []scripted.Step
	for i := range n {
		steps = append(steps,
			scripted.Step{Text: fmt.Sprintf("reading part %d", i), ToolCalls: []scripted.Call{scriptCall("read", fmt.Sprintf(`{"path":"part%03d.txt"}`, i))}},
			scripted.Step{ToolCalls: []scripted.Call{scriptCall("read", fmt.Sprintf(`{"path":".harness/spill/c/part%03d.txt","offset":%d}`, i, i+1))}})
	}
	steps = append(steps, scripted.Step{Text: "done"})
	c := tokens.NewCache(o200k(t), nil)
	for _, charge := range []bool{false, true} {
		t.Run(fmt.Sprintf("charge=%v", charge), func(t *testing.T) {
			rec := &stuckRecorder{}
			agent, err := harness.New(rec.wrap(scripted.New(&scripted.Script{Steps: steps}, &scripted.Options{Counter: o200k(t)})), &harness.Options{
				Tools: []harness.Tool{read}, MaxRounds: len(steps), Observer: rec.observe, Guards: []harness.Guard{cut},
				Policies: []harness.ViewPolicy{&CompactPolicy{Window: 1 << 20, Counter: c, ClearOld: 3000, ChargeRereads: charge}},
			})
			if err != nil {
				t.Fatal(err)
			}
			res, err := agent.Run(context.Background(), harness.NewConversation("c"), "read every part")
			if err != nil || res.Outcome != harness.Answered {
				t.Fatalf("%v %s", err, res.Outcome)
			}
			if clears := len(rec.policyEvents(compactName)); (clears > 0) == charge {
				t.Fatalf("%d clears for cost with ChargeRereads %v", clears, charge)
			}
		})
	}
}
