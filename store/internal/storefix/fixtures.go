// Package storefix holds the fixtures the store tests share: scripted
// models, tools and conversations, and checks of what a store gives back.
package storefix

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// RichConversation uses every field the transcript has: a result a guard
// spilled (big bytes of payload), parts of every kind with invalid UTF-8
// and JSON whose whitespace must survive, a timed-out call, arguments that
// are not JSON, dropped calls, usage, stats, answer times (and rounds
// without one, as stored before they were recorded) and notes.
func RichConversation(id string, big int) *harness.Conversation {
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
						Results:  []*harness.ToolResult{cut, structured},
						Usage:    harness.Usage{Input: 100, Output: 20},
						Stats:    harness.RequestStats{Messages: 2, Tools: 2, ToolBytes: 300},
						Answered: t0.Add(300 * time.Millisecond),
					},
					{
						Index:     2,
						Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("it failed")}},
						Usage:     harness.Usage{Input: 200, Cached: 100, CacheWrite: 7, Output: 20},
						Stats:     harness.RequestStats{Messages: 5, EvidenceChars: 186, Tools: 2, ToolBytes: 300},
						Answered:  t0.Add(900 * time.Millisecond),
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

// CutConversation has one result of size bytes whose model copy a guard
// cut to a 4 KB preview, among nine small results.
func CutConversation(id string, size int) *harness.Conversation {
	big := strings.Repeat("0123456789abcdef build output line\n", size/35+1)[:size]
	preview := big[:3072] + "\n… [spilled " + fmt.Sprint(size) + " bytes]\n" + big[size-1024:]
	r := &harness.Round{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant}}
	for i := range 10 {
		id := fmt.Sprintf("call_%d", i)
		r.Assistant.ToolCalls = append(r.Assistant.ToolCalls, harness.ToolCall{ID: id, Name: "shell", Args: []byte(`{}`)})
		res := &harness.ToolResult{CallID: id, Tool: "shell", Parts: []harness.Part{harness.TextPart("small result " + id)}}
		if i == 0 {
			res.Parts = []harness.Part{harness.TextPart(big)}
			res.Model = []harness.Part{harness.TextPart(preview)}
			res.Cuts = []harness.Cut{{Kind: harness.CutSpilled, By: "ceiling", BytesIn: size, BytesOut: len(preview), Locator: ".harness/spill/x.txt"}}
		}
		res.Bytes = res.PayloadSize()
		r.Results = append(r.Results, res)
	}
	answer := &harness.Round{Index: 2, Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("done")}}}
	return &harness.Conversation{ID: id, Turns: []*harness.Turn{{Index: 1, Input: "build", Outcome: harness.Answered, Rounds: []*harness.Round{r, answer}}}}
}

// Payload is the deterministic output of a call, sized from a few bytes to
// 30 KB, so that content hashes can be checked after the fact.
func Payload(conv string, turn int, call string) string {
	seed := fmt.Sprintf("%s/%d/%s", conv, turn, call)
	sum := sha256.Sum256([]byte(seed))
	n := 10 + int(sum[0])*120
	return seed + ":" + strings.Repeat(hex.EncodeToString(sum[:]), n/64+1)[:n]
}

// HashOf returns the hex SHA-256 of s, as the stores hash a payload.
func HashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// ToolModel asks for two fetches in the first round of a turn and answers
// in the second; its answer names the turn so resumed views can be checked.
// With requests and mu not nil, it keeps every request it is sent.
func ToolModel(requests *[]*harness.Request, mu *sync.Mutex) harness.ModelFunc {
	return func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		if mu != nil {
			mu.Lock()
			*requests = append(*requests, req)
			mu.Unlock()
		}
		if req.Round == 1 && !req.Final {
			return &harness.Response{
				Message: harness.Message{ToolCalls: []harness.ToolCall{
					{ID: fmt.Sprintf("t%d_a", req.Turn), Name: "fetch", Args: json.RawMessage(`{"what":"a"}`)},
					{ID: fmt.Sprintf("t%d_b", req.Turn), Name: "fetch", Args: json.RawMessage(`{"what":"b"}`)},
				}},
				Usage: harness.Usage{Input: 100 * req.Turn, Cached: 10, Output: 5},
			}, nil
		}
		return &harness.Response{
			Message: harness.Message{Parts: []harness.Part{harness.TextPart(fmt.Sprintf("answer of turn %d after %d messages", req.Turn, len(req.Messages)))}},
			Usage:   harness.Usage{Input: 200 * req.Turn, Output: 7},
		}, nil
	}
}

// FetchTool returns Payload of its conversation, turn and call.
func FetchTool() harness.Tool {
	return harness.Tool{
		Spec: harness.ToolSpec{Name: "fetch", Description: "fetch a thing", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			info, _ := harness.CallInfoFrom(ctx)
			return harness.TextResult(Payload(info.Conversation, info.Turn, call.ID)), nil
		},
	}
}

// NewAgent is an agent with system prompt "sys" and FetchTool that records
// into s.
func NewAgent(t testing.TB, s store.Store, model harness.Model, policies ...harness.ViewPolicy) *harness.Agent {
	t.Helper()
	a, err := harness.New(model, &harness.Options{
		System: "sys", Tools: []harness.Tool{FetchTool()}, Recorder: s, Observer: harness.Observer(s.Observe), Policies: policies,
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// GraphQLTools returns n tools shaped like a GraphQL server's: each with a
// description and an input schema of a few typed fields.
func GraphQLTools(n int) []harness.Tool {
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

// CallEveryRound asks for one call of tool in every round that offers
// tools and answers when they are withheld.
func CallEveryRound(tool string) harness.ModelFunc {
	return func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		if len(req.Tools) == 0 {
			return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart("done")}}}, nil
		}
		return &harness.Response{Message: harness.Message{ToolCalls: []harness.ToolCall{
			{Name: tool, Args: json.RawMessage(`{"id":"1"}`)}}}}, nil
	}
}

// Specs returns the schemas of tools.
func Specs(tools []harness.Tool) []harness.ToolSpec {
	out := make([]harness.ToolSpec, len(tools))
	for i, t := range tools {
		out[i] = t.Spec
	}
	return out
}

// LineFile is a file of n distinct lines long enough to start a collapsed
// block (guard.Collapse ignores short lines).
func LineFile(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %03d of the notes the agent reads twice", i+1)
	}
	return lines
}

// ReadLinesTool reads lines from..to of file.
func ReadLinesTool(file []string) harness.Tool {
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

// ReadsModel asks for one read_lines call per round, ranges[i] in round
// i+1, then answers.
func ReadsModel(ranges ...[2]int) harness.ModelFunc {
	return func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		if i := req.Round - 1; i < len(ranges) && !req.Final {
			return &harness.Response{Message: harness.Message{ToolCalls: []harness.ToolCall{{
				ID: fmt.Sprintf("read_%d", req.Round), Name: "read_lines", Args: json.RawMessage(fmt.Sprintf(`{"from":%d,"to":%d}`, ranges[i][0], ranges[i][1])),
			}}}, Usage: harness.Usage{Input: 100, Output: 5}}, nil
		}
		return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart("done")}}, Usage: harness.Usage{Input: 100, Output: 3}}, nil
	}
}

// CutsByCall returns the cuts of every result of conv, by call id.
func CutsByCall(conv *harness.Conversation) map[string][]harness.Cut {
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

// JSONOf returns v as indented JSON, failing t if it does not marshal,
// so a test's diff shows two values field by field.
func JSONOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
