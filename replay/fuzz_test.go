package replay

import (
	"errors"
	"os"
	"testing"
)

// checkParse asserts what every importer promises for any input: no
// panic, and either a recording whose results answer its calls or an
// error that names the file and a position inside it.
func checkParse(t *testing.T, name string, data []byte, rec *Recording, err error) {
	t.Helper()
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			if pe.File != name || pe.Offset < 0 || pe.Offset > int64(len(data)) || pe.Line < 1 || pe.Col < 1 {
				t.Fatalf("bad position in %v", err)
			}
			return
		}
		if !errors.Is(err, ErrNotTranscript) {
			t.Fatalf("error is neither a ParseError nor ErrNotTranscript: %v", err)
		}
		return
	}
	for _, turn := range rec.Turns {
		for _, c := range turn.Calls {
			ids := map[string]bool{}
			for _, tc := range c.Assistant.ToolCalls {
				ids[tc.ID] = true
			}
			for _, r := range c.Results {
				if !ids[r.CallID] {
					t.Fatalf("result %q answers no call of its message", r.CallID)
				}
			}
		}
	}
}

func seeds(f *testing.F, files ...string) {
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"t","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":[{"type":"text","text":"ok"}]}]`))
	f.Add([]byte("{\"role\":\"user\",\"content\":\"a\"}\n{\"role\":\"assistant\",\"content\":null}\n"))
	f.Add([]byte(`{"messages":[{"role":"tool"}]}`))
	f.Add([]byte(`[`))
	f.Add([]byte("\xff\xfe"))
}

func FuzzParseMiniSWE(f *testing.F) {
	seeds(f, "testdata/chat.json")
	f.Add([]byte(`{"trajectory_format":"mini-swe-agent-1.1","messages":[{"role":"user","content":"t"},{"role":"assistant","tool_calls":[{"id":"x","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},{"role":"tool","tool_call_id":"x","content":"<returncode>0</returncode>\n<warning>long</warning>","extra":{"raw_output":"a b c","returncode":0}},{"role":"exit","content":""}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := parseMiniSWE("f.traj.json", data)
		checkParse(t, "f.traj.json", data, rec, err)
	})
}

func FuzzParseOpenAI(f *testing.F) {
	seeds(f, "testdata/chat.json", "testdata/chat.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := parseOpenAI("f.jsonl", data)
		checkParse(t, "f.jsonl", data, rec, err)
	})
}

func FuzzParseConversation(f *testing.F) {
	seeds(f, "testdata/conversation.json")
	f.Add([]byte(`{"id":"c","turns":[{"index":1,"input":"q","context":[{"text":"env"},{"text":"skill","after_input":true}],"rounds":[{"index":1,"assistant":{"role":"assistant","parts":[{"type":"text","text":"a"}]}}]}]}`))
	f.Add([]byte(`{"turns":[{"input":"q","context":"env"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := parseConversation("f.json", data)
		checkParse(t, "f.json", data, rec, err)
	})
}

func FuzzParse(f *testing.F) {
	seeds(f, "testdata/chat.json", "testdata/conversation.json", "testdata/mixed/d-syntax.json", "testdata/anthropic/messages.json", "testdata/anthropic/request.json", "testdata/responses/items.json", "testdata/responses/request.json", "testdata/openhands/trajectory.json", "testdata/openhands/output-sdk.jsonl", "testdata/mini-swe-agent-1/calc__add-1.traj.json", "testdata/mini-swe-agent-2/calc__add-2.traj.json", "testdata/mini-swe-agent-2/calc__add-3.traj.json", "testdata/claude-code/output-stream-json.jsonl", "testdata/codex/exec-json.jsonl", "testdata/opencode/run-json.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := Parse("f.json", data)
		checkParse(t, "f.json", data, rec, err)
	})
}
