package replay

import (
	"strings"
	"testing"
)

// TestGeminiCLILogMapping imports the session log Gemini CLI 0.61.0
// wrote for a scripted run (two shell calls, then the answer; see
// testdata/gemini-cli/SOURCE.md): each response is recorded twice (a
// call's id before its tool calls ran, then whole) and each result twice
// (in the call's toolCalls and in the user message that sent it), and
// the ids carry the tool's name in front, which the API never saw.
func TestGeminiCLILogMapping(t *testing.T) {
	rec, err := ParseFile("testdata/gemini-cli/session-2026-12-02T04-05-62a661cc.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Format != formatGeminiCLI || rec.ID != "62a661cc-c012-419e-96b9-d8012ca8849f" || rec.Model != "gemini-3.1-pro-preview" {
		t.Errorf("format %q id %q model %q", rec.Format, rec.ID, rec.Model)
	}
	var inputs, context, calls, times []string
	var results []*Result
	var last *Call
	for _, turn := range rec.Turns {
		inputs = append(inputs, turn.Input)
		for _, c := range turn.Context {
			context = append(context, c.Text)
		}
		for _, c := range turn.Calls {
			times = append(times, c.Time.UTC().Format("15:04:05.000"))
			if !c.HasUsage || c.Usage.Input == 0 || c.Usage.Output != 20 {
				t.Errorf("call %d usage %+v (has %v), want the message's tokens", len(calls), c.Usage, c.HasUsage)
			}
			for _, tc := range c.Assistant.ToolCalls {
				calls = append(calls, tc.ID+" "+tc.Name+" "+string(tc.Args))
			}
			results = append(results, c.Results...)
			last = c
		}
	}
	want := []string{`call_lock run_shell_command {"command":"cat package-lock.json"}`, `call_pkg run_shell_command {"command":"cat package.json"}`}
	if strings.Join(calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("tool calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
	// Each response's time is its message's timestamp (the kept record's).
	if got := strings.Join(times, " "); got != "04:05:32.692 04:05:32.818 04:05:32.876" {
		t.Errorf("call times %s, want the responses' timestamps", got)
	}
	if len(results) != 2 || results[0].CallID != "call_lock" || results[1].CallID != "call_pkg" {
		t.Fatalf("results %+v, want one per call, in order", results)
	}
	if !strings.HasPrefix(results[0].Shown, "Output too large. Showing first 8,000") || !strings.Contains(results[1].Shown, `"zod":"^3.23.0"`) {
		t.Errorf("results shown: %.60q, %.60q", results[0].Shown, results[1].Shown)
	}
	// The question is the one turn, the session context Gemini CLI sent
	// before it is that turn's context, and a user message that only
	// sends the results is no turn.
	if len(inputs) != 1 || !strings.HasPrefix(inputs[0], "Which version of zod") {
		t.Errorf("turn inputs %q, want the question alone", inputs)
	}
	if len(context) != 1 || !strings.HasPrefix(context[0], "<session_context>") || rec.Turns[0].Context[0].AfterInput {
		t.Errorf("turn context %.40q, want the session context before the question", context)
	}
	if rec.Calls() != 3 || last.Assistant.Text() != "The lock file pins zod at version 3.23.8." {
		t.Errorf("%d calls, last answers %q", rec.Calls(), last.Assistant.Text())
	}
	all := strings.Join(rec.Warnings, "\n")
	for _, w := range []string{"not recorded by gemini-cli: the system prompt and the tool schemas", "1 responses were cut by Gemini CLI itself"} {
		if !strings.Contains(all, w) {
			t.Errorf("no warning with %q in:\n%s", w, all)
		}
	}
}

// TestGeminiCLILogRecords folds a log's records as Gemini CLI does when
// it resumes a session: a message written again replaces its first
// record in place, a $set messages list replaces every message, and a
// $rewindTo removes a message and those after it; the responses removed
// are counted in a warning.
func TestGeminiCLILogRecords(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		answers   []string // the text of each call, in order
		dropped   string   // the warning's count, "" for none
	}{
		{"rewritten in place", `{"sessionId":"s","projectHash":"h"}
{"id":"u1","type":"user","content":[{"text":"q"}]}
{"id":"g1","type":"gemini","content":"draft","tokens":{"input":5,"output":1}}
{"id":"u2","type":"user","content":[{"text":"more"}]}
{"id":"g1","type":"gemini","content":"final","tokens":{"input":5,"output":1}}
`, []string{"final"}, ""},
		{"rewind", `{"sessionId":"s","projectHash":"h"}
{"id":"u1","type":"user","content":"q"}
{"id":"g1","type":"gemini","content":"one"}
{"id":"u2","type":"user","content":"again"}
{"id":"g2","type":"gemini","content":"two"}
{"$rewindTo":"u2"}
{"id":"u3","type":"user","content":"instead"}
{"id":"g3","type":"gemini","content":"three"}
`, []string{"one", "three"}, "1 model responses were removed"},
		{"list replaced", `{"sessionId":"s","projectHash":"h"}
{"id":"u1","type":"user","content":"q"}
{"id":"g1","type":"gemini","content":"one"}
{"id":"g2","type":"gemini","content":"two"}
{"$set":{"messages":[{"id":"u1","type":"user","content":"q"},{"id":"g2","type":"gemini","content":"two"}],"lastUpdated":"t"}}
{"id":"g4","type":"gemini","content":"four"}
{"id":"g5","type":"gemini","content":"fi`, []string{"two", "four"}, "1 model responses were removed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sniff([]byte(tc.log)); got != formatGeminiCLI {
				t.Fatalf("sniffed %q", got)
			}
			rec, err := parseGeminiCLI("s.jsonl", []byte(tc.log))
			if err != nil {
				t.Fatal(err)
			}
			var answers []string
			for _, turn := range rec.Turns {
				for _, c := range turn.Calls {
					answers = append(answers, c.Assistant.Text())
				}
			}
			if strings.Join(answers, ",") != strings.Join(tc.answers, ",") || rec.ID != "s" {
				t.Errorf("id %q, calls answer %q, want %q", rec.ID, answers, tc.answers)
			}
			all := strings.Join(rec.Warnings, "\n")
			if (tc.dropped == "") == strings.Contains(all, "were removed") || !strings.Contains(all, tc.dropped) {
				t.Errorf("warnings:\n%s\nwant %q", all, tc.dropped)
			}
			if partial := strings.Contains(all, "last line is incomplete"); partial != strings.HasSuffix(tc.log, "fi") {
				t.Errorf("incomplete last line reported %v", partial)
			}
		})
	}
}
