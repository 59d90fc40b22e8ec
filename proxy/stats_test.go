package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
)

// TestStatsFields: GET /stats reports, in total and per conversation, the
// tokens the scripted upstream reported, the bytes the proxy received,
// forwarded and removed, and the cache breaks it caused (0).
func TestStatsFields(t *testing.T) {
	wc := wireCases[0]
	r := newRig(t, nil)
	const model = "test-model"
	lock := lockFile(100 << 10)
	read := step{id: "call_1", tool: "shell", args: `{"command":"cat package-lock.json"}`, result: lock}
	ua1 := wiretest.Usage{Input: 1000, Cached: 800, Output: 20}
	ua2 := wiretest.Usage{Input: 1500, Cached: 1200, Output: 30}
	ub := wiretest.Usage{Input: 700, Cached: 0, Output: 10}
	r.up.Enqueue(
		wc.reply(model, "", []wiretest.Call{{ID: read.id, Name: read.tool, Args: read.args}}, ua1),
		wc.reply(model, "pinned at 1.10.0", nil, ua2),
		wc.reply(model, "hello", nil, ub),
	)
	bodies := [][]byte{
		wc.body(model, "Which zod version?", nil),
		wc.body(model, "Which zod version?", []step{read}),
		wc.body(model, "Say hello.", nil),
	}
	for i, b := range bodies {
		if status, _, got := r.post(wc.path, b, nil); status != 200 {
			t.Fatalf("request %d: status %d: %s", i+1, status, got)
		}
	}
	if err := r.px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := r.up.Requests()
	if len(reqs) != 3 {
		t.Fatalf("upstream got %d requests, want 3", len(reqs))
	}
	in := func(is ...int) (n int64) {
		for _, i := range is {
			n += int64(len(bodies[i]))
		}
		return n
	}
	out := func(is ...int) (n int64) {
		for _, i := range is {
			n += int64(len(reqs[i].Body))
		}
		return n
	}
	resp, err := http.Get(r.srv.URL + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var s Stats
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("/stats is not JSON: %v\n%s", err, raw)
	}
	var a, b ConversationStats
	for _, cs := range s.ByConversation {
		switch cs.Requests {
		case 2:
			a = cs
		case 1:
			b = cs
		}
	}
	if len(s.ByConversation) != 2 {
		t.Fatalf("/stats has %d conversations, want 2:\n%s", len(s.ByConversation), raw)
	}
	tokens := func(us ...wiretest.Usage) (t Tokens) {
		for _, u := range us {
			t.add(Tokens{Input: int64(u.Input), Cached: int64(u.Cached), Output: int64(u.Output)})
		}
		return t
	}
	for _, tc := range []struct {
		name                string
		gotIn, gotOut, gotR int64
		wantIn, wantOut     int64
		breaks              int64
		got, want           Tokens
	}{
		{"total", s.BytesIn, s.BytesOut, s.BytesRemoved, in(0, 1, 2), out(0, 1, 2), s.CacheBreaks, s.Upstream, tokens(ua1, ua2, ub)},
		{"conversation a", a.BytesIn, a.BytesOut, a.BytesRemoved, in(0, 1), out(0, 1), a.CacheBreaks, a.Upstream, tokens(ua1, ua2)},
		{"conversation b", b.BytesIn, b.BytesOut, b.BytesRemoved, in(2), out(2), b.CacheBreaks, b.Upstream, tokens(ub)},
	} {
		if tc.gotIn != tc.wantIn || tc.gotOut != tc.wantOut || tc.gotR != tc.wantIn-tc.wantOut {
			t.Errorf("%s: bytes in/out/removed %d/%d/%d, want %d/%d/%d", tc.name, tc.gotIn, tc.gotOut, tc.gotR, tc.wantIn, tc.wantOut, tc.wantIn-tc.wantOut)
		}
		if tc.got != tc.want {
			t.Errorf("%s: upstream tokens %+v, want %+v", tc.name, tc.got, tc.want)
		}
		if tc.breaks != 0 {
			t.Errorf("%s: %d cache breaks, want 0", tc.name, tc.breaks)
		}
	}
	if s.Requests != 3 || s.BytesRemoved <= 0 || b.BytesRemoved != 0 {
		t.Errorf("requests %d, bytes removed %d (b: %d): want 3, the lock file's cut, 0", s.Requests, s.BytesRemoved, b.BytesRemoved)
	}
}

// TestStatsConversationsBounded: ByConversation keeps the conversations
// served most recently, dropping the least recently served one for a new
// one once it holds statsConversations, and counts what it dropped.
func TestStatsConversationsBounded(t *testing.T) {
	var s Stats
	for i := range statsConversations {
		s.serve(fmt.Sprint("c", i))
		s.ByConversation[fmt.Sprint("c", i)] = ConversationStats{Requests: 1}
	}
	s.serve("c0") // c0 is served again: c1 is now the least recent
	for _, tc := range []struct {
		id       string
		dropped  string
		nDropped int64
	}{
		{"new-1", "c1", 1},
		{"new-2", "c2", 2},
		{"c0", "", 2}, // known: nothing dropped
		{"new-3", "c3", 3},
	} {
		s.serve(tc.id)
		s.ByConversation[tc.id] = ConversationStats{Requests: 1} // as countConversation does
		if len(s.ByConversation) > statsConversations || len(s.served) != len(s.ByConversation) {
			t.Fatalf("%s: %d conversations, %d ordered; bound %d", tc.id, len(s.ByConversation), len(s.served), statsConversations)
		}
		if _, ok := s.ByConversation[tc.dropped]; tc.dropped != "" && ok {
			t.Errorf("%s: %s, the least recently served, is still kept", tc.id, tc.dropped)
		}
		if _, ok := s.ByConversation["c0"]; !ok {
			t.Errorf("%s: c0, served recently, was dropped", tc.id)
		}
		if s.ConversationsDropped != tc.nDropped {
			t.Errorf("%s: dropped %d, want %d", tc.id, s.ConversationsDropped, tc.nDropped)
		}
	}
}

// TestStatsNameTheReplica: behind a load balancer each replica counts the
// requests it served, so its /stats names it and says since when; a
// proxy that shares no store names no replica.
func TestStatsNameTheReplica(t *testing.T) {
	r := newReplicaRig(t, 2, true)
	ids := map[string]bool{}
	for i, px := range r.pxs {
		s := px.Stats()
		if s.Replica == "" || s.Since.IsZero() {
			t.Errorf("replica %d: /stats replica %q since %v; want both set", i, s.Replica, s.Since)
		}
		ids[s.Replica] = true
	}
	if len(ids) != 2 {
		t.Errorf("two replicas named %v; want two names", ids)
	}
	// A tenant's view names the replica too.
	if s := r.pxs[0].statsFor(func(string) bool { return false }, "t0123456789abcdef"); s.Replica != r.pxs[0].Stats().Replica || s.Since.IsZero() {
		t.Errorf("a tenant's /stats: replica %q since %v; want the replica's", s.Replica, s.Since)
	}
	px, err := New(&Options{Upstream: "http://127.0.0.1:1", Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	if s := px.Stats(); s.Replica != "" || s.Since.IsZero() {
		t.Errorf("a proxy alone: replica %q since %v; want no replica and a start time", s.Replica, s.Since)
	}
}
