package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/replay"
)

// ownHistory is what a client's own session history (the files it wrote
// under the test's HOME during a proxy end-to-end run) must import as:
// the first thing a user audits is the history of the client they run.
type ownHistory struct {
	dir    string            // the folder a user would audit (~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp)
	format string            // the importer that must recognise it
	calls  []string          // the tool calls the script made, "id name", in order
	sent   map[string]string // call id → the result the client sent for it (to the proxy)
	system string            // the system prompt the client sent, for a format that records one; "" for one that does not
	warn   []string          // warnings the format owes, each a substring of one
	// proxy is the proxy's store and the session's conversation in it,
	// when the turns it recorded must agree with the import (context
	// tells the client's context messages apart; nil: no check).
	proxy   *e2eRig
	context func(text string) bool
	// sameContext: the client records its context messages as it sent
	// them (Codex), so the proxy's must be the import's, but for those
	// it sent in developer messages (developer), which the proxy keeps
	// with the system prompt.
	sameContext bool
	developer   string
}

// checkOwnHistory runs harness audit and harness bench on the history as
// a user would, through runMain, and checks what the import holds against
// what the client sent: one recording, the script's tool calls with
// their ids, each result as long as the client sent it, the scripted
// answer, and the warnings for what the format does not record.
func checkOwnHistory(t *testing.T, h ownHistory) {
	t.Helper()
	for _, args := range [][]string{
		{"audit", h.dir},
		{"bench", "--presets", "none,harness", h.dir},
	} {
		if _, errOut, code := runWithEnv(t, nil, args...); code != 0 {
			t.Errorf("harness %s: exit %d: %s", strings.Join(args, " "), code, tail(errOut, 2000))
		}
	}
	out, errOut, code := runWithEnv(t, nil, "audit", "--json", "--presets", "none", h.dir)
	if code != 0 {
		t.Fatalf("harness audit --json %s: exit %d: %s", h.dir, code, tail(errOut, 2000))
	}
	var report struct {
		Recordings []struct {
			Format  string `json:"format"`
			Calls   int    `json:"calls"`
			Largest []struct {
				CallID string `json:"call_id"`
				Tool   string `json:"tool"`
				Chars  int    `json:"chars"`
			} `json:"largest"`
			Warnings []string `json:"warnings"`
		} `json:"recordings"`
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("audit --json: %v", err)
	}
	if len(report.Recordings) != 1 {
		t.Fatalf("audit --json reports %d recordings of %s, want the one session; standard error:\n%s", len(report.Recordings), h.dir, tail(errOut, 2000))
	}
	a := report.Recordings[0]
	var got []string
	for _, l := range a.Largest {
		got = append(got, l.CallID+" "+l.Tool)
		// The full text is at least what the client sent (more where
		// the client cut its own copy and kept the rest).
		if n := utf8.RuneCountInString(h.sent[l.CallID]); l.Chars < n {
			t.Errorf("audit: result %s has %d characters, the client sent %d", l.CallID, l.Chars, n)
		}
	}
	want := slices.Sorted(slices.Values(h.calls))
	if slices.Sort(got); a.Format != h.format || !slices.Equal(got, want) || a.Calls != len(h.calls)+1 {
		t.Errorf("audit: format %q, %d model calls, results of %q; want %q, %d, %q", a.Format, a.Calls, got, h.format, len(h.calls)+1, want)
	}
	for _, w := range h.warn {
		if !slices.ContainsFunc(a.Warnings, func(s string) bool { return strings.Contains(s, w) }) {
			t.Errorf("audit: no warning with %q in %q", w, a.Warnings)
		}
	}
	checkOwnRecording(t, h)
}

// checkOwnRecording checks, through replay.Load, what the JSON does not
// carry: each tool call in order, each result as the client sent it, the
// system prompt where the format records one, and the final answer.
func checkOwnRecording(t *testing.T, h ownHistory) {
	t.Helper()
	recs, _, err := replay.Load(h.dir)
	if err != nil || len(recs) != 1 {
		t.Fatalf("replay.Load(%s): %d recordings, %v", h.dir, len(recs), err)
	}
	rec := recs[0]
	if (rec.System == "") != (h.system == "") || !linesIn(h.system, rec.System) {
		t.Errorf("system prompt recorded: %d characters (%.60q); the client sent %d (%.60q)", len(rec.System), rec.System, len(h.system), h.system)
	} else if h.system != "" {
		t.Logf("system prompt: %d characters recorded, %d sent", len(rec.System), len(h.system))
	}
	var calls []string
	var last *replay.Call
	for _, turn := range rec.Turns {
		for _, c := range turn.Calls {
			for _, tc := range c.Assistant.ToolCalls {
				calls = append(calls, tc.ID+" "+tc.Name)
			}
			for _, r := range c.Results {
				if sent, ok := h.sent[r.CallID]; !ok || r.Shown != sent {
					t.Errorf("result %s: recorded as shown %d characters, the client sent %d (%v)", r.CallID, utf8.RuneCountInString(r.Shown), utf8.RuneCountInString(sent), ok)
				}
			}
			last = c
		}
	}
	if !slices.Equal(calls, h.calls) {
		t.Errorf("tool calls %q, want %q", calls, h.calls)
	}
	if last == nil || last.Assistant.Text() != e2eAnswer {
		t.Errorf("the last call does not answer %q", e2eAnswer)
	}
	if h.proxy != nil {
		checkProxyTurns(t, h, rec)
	}
}

// checkProxyTurns checks the turns the proxy stored for the session
// against the import of the client's own history: the same turns, each
// input the user's words as the client recorded them, every context
// message one the client adds (its classifier says so), the first turn
// with at least one, and, for a client that records its context, the
// same messages in the same order.
func checkProxyTurns(t *testing.T, h ownHistory, rec *replay.Recording) {
	t.Helper()
	st := h.proxy.openStore(t)
	conv, err := st.Load(context.Background(), h.proxy.conv)
	if err != nil {
		t.Fatalf("loading the session %q from the proxy's store: %v", h.proxy.conv, err)
	}
	if len(conv.Turns) != len(rec.Turns) {
		t.Fatalf("the proxy stored %d turn(s), the client's history imports as %d", len(conv.Turns), len(rec.Turns))
	}
	for i, turn := range conv.Turns {
		want := rec.Turns[i]
		if turn.Input != want.Input {
			t.Errorf("turn %d: the proxy stored the input %.80q, the client recorded %.80q", i+1, turn.Input, want.Input)
		}
		for j, cm := range turn.Context {
			if !h.context(cm.Text) {
				t.Errorf("turn %d: context message %d (%.60q) is not one the client adds", i+1, j+1, cm.Text)
			}
		}
		wantCtx := slices.DeleteFunc(slices.Clone(want.Context), func(cm harness.ContextMessage) bool {
			return h.developer != "" && strings.Contains(h.developer, cm.Text)
		})
		if h.sameContext && !slices.Equal(turn.Context, wantCtx) {
			t.Errorf("turn %d: the proxy stored %d context message(s), the client recorded %d outside developer messages:\n%+v\n%+v",
				i+1, len(turn.Context), len(wantCtx), turn.Context, wantCtx)
		}
		t.Logf("turn %d: input %d characters, %d context message(s) (the client's history: %d, %d in developer messages)",
			i+1, len(turn.Input), len(turn.Context), len(want.Context), len(want.Context)-len(wantCtx))
	}
	if len(conv.Turns) > 0 && len(conv.Turns[0].Context) == 0 {
		t.Errorf("the proxy stored no context message with the first turn: %.200q", conv.Turns[0].Input)
	}
	// What a user reads of it: harness log show --json.
	out, errOut, code := runWithEnv(t, nil, "log", "show", "--db", h.proxy.db, "--json", h.proxy.conv)
	if code != 0 {
		t.Fatalf("harness log show: exit %d: %s", code, tail(errOut, 2000))
	}
	var shown struct {
		Turns []logTurn `json:"turns"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatalf("harness log show --json: %v", err)
	}
	if len(shown.Turns) != len(conv.Turns) {
		t.Fatalf("harness log show --json: %d turns, the store holds %d", len(shown.Turns), len(conv.Turns))
	}
	for i, lt := range shown.Turns {
		if lt.Input != conv.Turns[i].Input || len(lt.Context) != len(conv.Turns[i].Context) {
			t.Errorf("harness log show --json: turn %d has input %.60q and %d context message(s); stored: %.60q, %d",
				i+1, lt.Input, len(lt.Context), conv.Turns[i].Input, len(conv.Turns[i].Context))
		}
	}
}

// linesIn reports whether every line of sent is a line of recorded, in
// order: the prompt a client sent is the one it recorded, perhaps with
// whole sections left out (Codex 0.171.0 records its prompt template as
// base_instructions and leaves out the sections on tools a session does
// not offer, update_plan under codex exec).
func linesIn(sent, recorded string) bool {
	rest := strings.Split(recorded, "\n")
	for _, l := range strings.Split(sent, "\n") {
		i := slices.Index(rest, l)
		if i < 0 {
			return false
		}
		rest = rest[i+1:]
	}
	return true
}

// sentText is the result a client sent, from what the upstream got for
// it (resultContents, the proxy's encoding): the text, when the proxy
// passed it unchanged.
func sentText(t *testing.T, raws []string) string {
	t.Helper()
	if len(raws) == 0 {
		t.Fatal("the upstream never got the result")
	}
	var s string
	if err := json.Unmarshal([]byte(raws[0]), &s); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(s, "[harness:") {
		t.Fatalf("the proxy changed the result (%d bytes): what the client sent is in the spill file", len(s))
	}
	return s
}
