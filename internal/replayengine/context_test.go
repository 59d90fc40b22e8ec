package replayengine

import (
	"context"
	"fmt"
	"github.com/agentharness/harness"
	"github.com/agentharness/harness/replay"
	"path/filepath"
	"strings"
	"testing"
)

// unfold returns rec as importers built it before context folded: every
// context message a turn of its own, a turn's calls in its last.
func unfold(rec *replay.Recording) *replay.Recording {
	out := *rec
	out.Turns = nil
	for _, t := range rec.Turns {
		var msgs []string
		for _, c := range t.Context {
			if !c.AfterInput {
				msgs = append(msgs, c.Text)
			}
		}
		msgs = append(msgs, t.Input)
		for _, c := range t.Context {
			if c.AfterInput {
				msgs = append(msgs, c.Text)
			}
		}
		for i, m := range msgs {
			nt := &replay.Turn{Input: m}
			if i == len(msgs)-1 {
				nt.Calls = t.Calls
			}
			out.Turns = append(out.Turns, nt)
		}
	}
	return &out
}

// TestContextSendsSameRequests replays each shipped Codex and Gemini CLI
// recording, and a rollout with a skill's text after its prompt, as
// imported and as it was imported before its context folded (every
// context message a turn): every request holds the same messages, byte
// for byte, and counts the same tokens, cached ones included.
func TestContextSendsSameRequests(t *testing.T) {
	files, _ := filepath.Glob("../../replay/testdata/codex/*.jsonl")
	gem, _ := filepath.Glob("../../replay/testdata/gemini-cli/*.json*")
	var recs []*replay.Recording
	for _, file := range append(files, gem...) {
		rec, err := replay.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	skill, err := replay.Parse("skill.jsonl", []byte(`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>e</environment_context>"}]}}
{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"$skill-installer"}]}}
{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<skill>\n<name>skill-installer</name>"}]}}
{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"a"}}
{"type":"response_item","payload":{"type":"function_call_output","call_id":"a","output":"ok"}}
{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	folded := 0
	for _, rec := range append(recs, skill) {
		file := rec.Source
		for _, turn := range rec.Turns {
			folded += len(turn.Context)
		}
		requests := func(r *replay.Recording) ([]string, []CallStat) {
			var views []string
			capture := harness.ViewPolicyFunc(func(_ context.Context, v *harness.View) error {
				var b strings.Builder
				for _, m := range v.Messages {
					fmt.Fprintf(&b, "%s:%q\n", m.Role, m.Text())
				}
				views = append(views, b.String())
				return nil
			})
			rep, err := Replay(context.Background(), r, policy("probe", Config{Policies: []harness.ViewPolicy{capture}}), nil)
			if err != nil {
				t.Fatal(err)
			}
			return views, rep.Calls
		}
		views, calls := requests(rec)
		oldViews, oldCalls := requests(unfold(rec))
		if len(views) != len(oldViews) || len(views) != rec.Calls() {
			t.Fatalf("%s: %d and %d requests, want %d", file, len(views), len(oldViews), rec.Calls())
		}
		for i := range views {
			if views[i] != oldViews[i] {
				t.Errorf("%s: request %d differs:\n%s\nwas:\n%s", file, i+1, views[i], oldViews[i])
			}
			if calls[i].Input != oldCalls[i].Input || calls[i].Cached != oldCalls[i].Cached {
				t.Errorf("%s: request %d: %d tokens, %d cached; were %d, %d", file, i+1, calls[i].Input, calls[i].Cached, oldCalls[i].Input, oldCalls[i].Cached)
			}
		}
	}
	if folded == 0 {
		t.Fatal("no fixture has context messages")
	}
}
