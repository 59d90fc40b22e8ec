package proxy

import (
	"bufio"
	"bytes"
	"reflect"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
)

// replyPairs are each format's reply parser beside the reference it must
// read every answer as.
func replyPairs() []struct {
	name     string
	got, ref replyParser
} {
	return []struct {
		name     string
		got, ref replyParser
	}{
		{"anthropic", anthropicFormat{}.newReply(), &refAnthropicReply{blocks: map[int]*refAnthropicBlock{}}},
		{"openai-chat", chatFormat{}.newReply(), &refChatReply{calls: map[int]*refChatCall{}}},
		{"openai-responses", responsesFormat{}.newReply(), &refResponsesReply{}},
	}
}

// sameReplies feeds stream (as server-sent events, then as a whole body)
// to every parser and its reference and fails on the first difference.
func sameReplies(t *testing.T, stream []byte) {
	t.Helper()
	for _, p := range replyPairs() {
		for _, q := range []replyParser{p.got, p.ref} {
			var out bytes.Buffer
			if _, err := relayEvents(&out, nil, bufio.NewReaderSize(bytes.NewReader(stream), eventBuffer), q); err != nil {
				t.Fatal(err)
			}
			q.body(stream)
		}
		if got, want := p.got.reply(), p.ref.reply(); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s reads %q as\n%+v\nthe reference as\n%+v", p.name, stream, got, want)
		}
	}
}

// TestReplyParsersMatchReference: the reply parsers read answers through
// the shared wire structs exactly as they did through their own, on every
// format's answers and on the edge cases where the two kinds of struct
// differ (arguments that are not strings, content that is not parts).
func TestReplyParsersMatchReference(t *testing.T) {
	var streams [][]byte
	for _, wc := range wireCases {
		for _, calls := range [][]wiretest.Call{nil, {{ID: "c1", Name: "Bash", Args: `{"command":"ls"}`}, {ID: "c2", Name: "Read", Args: `{}`}}} {
			var b bytes.Buffer
			for _, ev := range wc.reply("m", "hi", calls, wiretest.Usage{Input: 30, Cached: 20, Output: 4}).Events {
				b.WriteString(ev.Encode())
			}
			streams = append(streams, b.Bytes())
		}
	}
	for _, s := range []string{
		`data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":{"x":1}}}]}}],"usage":{"prompt_tokens":3}}` + "\n\n",
		`data: {"choices":[{"delta":{"content":"t","tool_calls":[{"index":0,"function":{"arguments":null}}]}}]}` + "\n\n",
		`{"choices":[{"message":{"content":"x","tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"a\":1}"}}]}}]}`,
		`{"choices":[{"message":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":7}}]}}]}`,
		`data: {"type":"response.output_item.done","item":{"type":"function_call","call_id":"c","name":"f","arguments":{"x":1}}}` + "\n\n",
		`data: {"type":"response.output_item.done","item":{"type":"message","content":"not parts"}}` + "\n\n",
		`data: {"type":"response.output_item.done","item":{"type":"message","content":null}}` + "\n\n",
		`data: {"type":"response.completed","response":{"output":[{"type":"custom_tool_call","call_id":"c","name":"p","input":"*** Begin"}],"usage":{"input_tokens":9,"output_tokens":2}}}` + "\n\n",
		`data: {"type":"response.completed","response":{"output":[{"type":"custom_tool_call","input":5}],"usage":{"input_tokens":9}}}` + "\n\n",
		`{"output":[{"type":"message","content":[{"type":"output_text","text":"a"},{"type":"output_text","text":"b"}]}],"usage":{"input_tokens":1}}`,
		`{"content":[{"type":"tool_use","id":"t","name":"n","input":{"a":1}},{"type":"text","text":"x"}],"usage":{"input_tokens":1,"cache_read_input_tokens":5,"output_tokens":2}}`,
		`data: {"type":"message_delta","usage":{"output_tokens":9}}` + "\n\n",
	} {
		streams = append(streams, []byte(s))
	}
	for _, s := range streams {
		sameReplies(t, s)
	}
}

// TestChatCallsMatchReference: an assistant message's tool_calls read
// through the shared struct as through the proxy's own.
func TestChatCallsMatchReference(t *testing.T) {
	for _, tc := range []string{
		`{"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]}`,
		`{"tool_calls":[{"id":"a","function":{"name":"f","arguments":{"x":1}}}]}`,
		`{"tool_calls":[{"id":"a","function":{"name":"f","arguments":null}},{"id":"b","function":{"name":"g"}}]}`,
		`{"tool_calls":[{"id":"a","function":"f"}]}`,
		`{"tool_calls":[]}`,
		`{"tool_calls":null}`,
	} {
		body := []byte(tc)
		fs, err := objectFields(body, span{Start: 0, End: len(body)})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := chatCalls(body, fs), refChatCalls(body, fs); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, the reference %+v", tc, got, want)
		}
	}
}

// FuzzReplyParsersMatchReference: on any stream the reply parsers read
// what their references read.
func FuzzReplyParsersMatchReference(f *testing.F) {
	for _, wc := range wireCases {
		var b bytes.Buffer
		for _, ev := range wc.reply("m", "hi", []wiretest.Call{{ID: "c1", Name: "Bash", Args: `{"a":1}`}}, wiretest.Usage{Input: 3, Output: 1}).Events {
			b.WriteString(ev.Encode())
		}
		f.Add(b.Bytes())
	}
	f.Add([]byte(`{"choices":[{"message":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":7}}]}}]}`))
	f.Add([]byte(`{"output":[{"type":"message","content":[{"type":"output_text","text":"a"}]}],"usage":{"input_tokens":1}}`))
	f.Fuzz(func(t *testing.T, b []byte) { sameReplies(t, b) })
}
