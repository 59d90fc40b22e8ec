package replayengine

import (
	"encoding/json"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/replay"
)

// FuzzWords checks the needle tokeniser: every word is a substring of the
// text, long enough, and made of word characters only.
func FuzzWords(f *testing.F) {
	f.Add("src/sqlfluff/rules/L060.py _eval_single_select Überprüfung \xff abcdef")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		words(s, func(w string) {
			if len([]rune(w)) < minNeedleChars || !containsWord(s, w) {
				t.Fatalf("bad word %q", w)
			}
			words(w, func(x string) {
				if x != w {
					t.Fatalf("word %q splits into %q", w, x)
				}
			})
		})
	})
}

func containsWord(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i:i+len(w)] == w {
			return true
		}
	}
	return false
}

// FuzzNeedlesComposed checks needle extraction on arbitrary result text and
// call arguments: every needle is a word of the result that showed it, is
// used by the call that follows, and a word used twice is one needle.
func FuzzNeedlesComposed(f *testing.F) {
	f.Add("The handler should validate records.\nfunc validateRecordId() {}\n", "Please explain why the handler should validate records before caching them in the store for later requests, thanks.")
	f.Add("\xff\xfe broken_utf8 text", "grep -n broken_utf8 .")
	f.Add("", "")
	f.Add("Keys need uniqueness across teams.\nstate: backlog\n", "- [ ] Handle the uniqueness of team keys before release\nconst k = keys.find((x) => x === 'backlog');")
	f.Add("progress making commits (NCD) l’ordre garantir\n", "A loop making progress has NCD > 0.3 and that is fine.\n  \"Updates are inside transactions (no extra commits)\",\n+- Clarifier l’ordre pour garantir l’autonomie des epics avant ingestion.")
	f.Fuzz(func(t *testing.T, result, arg string) {
		args, err := json.Marshal(map[string]string{"text": arg})
		if err != nil {
			t.Skip()
		}
		rec := &replay.Recording{Turns: []*replay.Turn{{Calls: []*replay.Call{
			{Assistant: harness.Message{ToolCalls: []harness.ToolCall{{ID: "1", Name: "read", Args: []byte(`{}`)}}},
				Results: []*replay.Result{{CallID: "1", Full: []harness.Part{harness.TextPart(result)}}}},
			{Assistant: harness.Message{ToolCalls: []harness.ToolCall{{ID: "2", Name: "write", Args: args}}}},
		}}}}
		seen := map[string]bool{}
		for _, n := range Needles(rec) {
			if n.CallID != "1" || n.Turn != 0 || n.Call != 1 || seen[n.Text] || !containsWord(result, n.Text) {
				t.Fatalf("bad needle %+v", n)
			}
			seen[n.Text] = true
		}
	})
}
