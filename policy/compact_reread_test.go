package policy

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/agentharness/harness"
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
