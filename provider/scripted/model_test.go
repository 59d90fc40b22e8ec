package scripted_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/provider/scripted"
	"github.com/agentharness/harness/tokens"
)

const twoStep = `{
  "steps": [
    {"expect": {"turn": 1, "round": 1, "final": false, "tools_include": ["echo"], "contains": ["say hi"]},
     "text": "calling", "tool_calls": [{"name": "echo", "args": {"text": "hi"}}]},
    {"expect": {"round": 2, "last_tool_contains": ["echo:hi"], "max_evidence_chars": 100},
     "text": "the tool said hi"}
  ]
}`

func echo() harness.Tool {
	return harness.Tool{
		Spec: harness.ToolSpec{Name: "echo", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			var a struct{ Text string }
			_ = json.Unmarshal(c.Args, &a)
			return harness.TextResult("echo:" + a.Text), nil
		},
	}
}

func words(s string) int { return len(strings.Fields(s)) }

func TestScriptDrivesAgent(t *testing.T) {
	s, err := scripted.Parse([]byte(twoStep))
	if err != nil {
		t.Fatal(err)
	}
	m := scripted.New(s, &scripted.Options{Counter: tokens.CounterFunc(words)})
	a, err := harness.New(m, &harness.Options{Tools: []harness.Tool{echo()}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background(), harness.NewConversation(""), "say hi")
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer != "the tool said hi" || res.Outcome != harness.Answered || m.Remaining() != 0 {
		t.Fatalf("answer %q outcome %s remaining %d", res.Answer, res.Outcome, m.Remaining())
	}
	r1, r2 := res.Turn.Rounds[0].Usage, res.Turn.Rounds[1].Usage
	if r1.Input == 0 || r1.Cached != 0 {
		t.Fatalf("first request usage %+v: computed input, nothing cached", r1)
	}
	// The second request repeats the first one's lines (tools, system,
	// user input) and adds to them: that shared prefix is cached.
	if r2.Cached == 0 || r2.Cached >= r2.Input || r2.Input <= r1.Input {
		t.Fatalf("second request usage %+v after %+v", r2, r1)
	}
}

func TestScriptDepartureIsAClearError(t *testing.T) {
	cases := []struct {
		name, script, input string
		want                []string
	}{
		{"expectation", `{"steps":[{"expect":{"contains":["banana"]},"text":"x"}]}`, "apple",
			[]string{"departed from the script at step 1", `contain "banana"`}},
		{"tool missing", `{"steps":[{"expect":{"tools_include":["grep"]},"text":"x"}]}`, "q",
			[]string{`tool "grep" to be offered`, "offered: [echo]"}},
		{"exhausted", `{"steps":[{"tool_calls":[{"name":"echo","args":{"text":"a"}}]}]}`, "q",
			[]string{"all 1 steps were played", "turn 1, round 2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := scripted.Parse([]byte(c.script))
			if err != nil {
				t.Fatal(err)
			}
			a, _ := harness.New(scripted.New(s, nil), &harness.Options{Tools: []harness.Tool{echo()}})
			res, err := a.Run(context.Background(), harness.NewConversation(""), c.input)
			if err == nil || res.Outcome != harness.Error {
				t.Fatalf("err %v outcome %s", err, res.Outcome)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestParseRejectsBadScripts(t *testing.T) {
	cases := map[string]string{
		`{"steps": []}`:                         "no steps",
		`{"steps": [{}]}`:                       "neither text nor tool calls",
		`{"steps": [{"text": "a", "txet": 1}]}`: "unknown field",
		"{\n\"steps\": [\n{\"text\": 5}]}":      "line 3",
		`{"steps": [{"tool_calls": [{}]}]}`:     "has no name",
	}
	for in, want := range cases {
		_, err := scripted.Parse([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) = %v, want an error saying %q", in, err, want)
		}
	}
}

func TestStreamDeliversTheWholeText(t *testing.T) {
	s, _ := scripted.Parse([]byte(`{"steps":[{"text":"one two  three"}]}`))
	var got strings.Builder
	resp, err := scripted.New(s, nil).GenerateStream(context.Background(), &harness.Request{Turn: 1, Round: 1}, func(p string) { got.WriteString(p) })
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != "one two  three" || resp.Message.Text() != got.String() {
		t.Fatalf("streamed %q, message %q", got.String(), resp.Message.Text())
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(twoStep))
	f.Add([]byte(`{"steps":[{"text":"x","usage":{"input":1}}]}`))
	f.Add([]byte(`{"steps":[{"tool_calls":[{"name":"a","args_raw":"{not json"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := scripted.Parse(data)
		if err != nil {
			return
		}
		if len(s.Steps) == 0 {
			t.Fatal("Parse accepted a script with no steps")
		}
	})
}

// TestDefaultUsageIsCounted: with no options, usage is counted in o200k
// tokens with the prompt cache, so Usage.Effective is never a silent 0.
func TestDefaultUsageIsCounted(t *testing.T) {
	s := &scripted.Script{Steps: []scripted.Step{{Text: "one"}, {Text: "two"}}}
	m := scripted.New(s, nil)
	req := &harness.Request{Messages: []harness.Message{{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart("hello there")}}}}
	first, err := m.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	second, err := m.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if first.Usage.Input == 0 || first.Usage.Output == 0 || first.Usage.Cached != 0 || first.Usage.Effective() == 0 {
		t.Fatalf("first usage %+v", first.Usage)
	}
	if second.Usage.Cached == 0 || second.Usage.Cached >= second.Usage.Input {
		t.Fatalf("the repeated request's prefix is not cached: %+v", second.Usage)
	}
}
