package proxy

import (
	"context"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

// TestResentCallID: a client re-sends a call id of a recorded round with
// other content. The upstream gets the new content; the store, whose
// round keeps the first, records what was sent as a ResentPolicy event
// (content, the copy sent, both hashes) and the log says so, without the
// content. Re-sending it once more records nothing new.
func TestResentCallID(t *testing.T) {
	r := newRig(t, nil)
	changed := []scriptTurn{
		{prompt: "t1", answer: "r1", steps: []step{bash("c1", "a different output\n")}},
		fourTurns[1], fourTurns[2],
	}
	ex := anthropicClient.exchanges(fourTurns[:2])
	ex2 := anthropicClient.exchanges(changed)
	for _, e := range append(ex, ex2[4], ex2[4]) {
		r.up.Enqueue(e.reply)
		if code, _, resp := r.post(anthropicClient.path, e.body, nil); code != 200 {
			t.Fatalf("status %d: %s", code, resp)
		}
	}
	if err := r.px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := r.up.Requests()
	if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, "a different output") {
		t.Fatalf("the upstream did not get the new content: %s", last)
	}
	list, err := r.st.List(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("%d conversations (err %v), want 1 (no fork)", len(list), err)
	}
	events, err := r.st.Events(context.Background(), list[0].ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var resent []harness.Event
	for _, e := range events {
		if e.Kind == harness.EventPolicy && e.Policy == ResentPolicy {
			resent = append(resent, e)
		}
	}
	if len(resent) != 1 {
		t.Fatalf("%d %s events, want 1: %+v", len(resent), ResentPolicy, events)
	}
	e := resent[0]
	if e.Turn != 1 || e.Round != 1 || e.Call == nil || e.Call.ID != "c1" || e.Data["content"] != "a different output\n" ||
		e.Data["sent"] != "a different output\n" || e.Data[metaHash] == e.Data["stored_sha256"] || e.Data["stored_sha256"] == "" {
		t.Errorf("event %+v", e)
	}
	log := r.log.String()
	if n := strings.Count(log, "re-sent with other content"); n != 1 {
		t.Errorf("%d log lines about it, want 1:\n%s", n, log)
	}
	if strings.Contains(log, "a different output") {
		t.Errorf("the log holds content:\n%s", log)
	}
}
