package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/proxy"
	"github.com/agentharness/harness/store/sqlite"
)

// TestLogShowFork: a conversation the proxy forked (a client rewound to
// turn 2 and asked it in other words) names its parent and where its
// history diverged, in text and in --json; its parent names none.
func TestLogShowFork(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "harness.db")
	st, err := sqlite.Open(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	up := wiretest.New(t)
	px, err := proxy.New(&proxy.Options{Upstream: up.URL, Store: st, Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(px)
	msg := func(role, text string) string {
		return `{"role":"` + role + `","content":[{"type":"text","text":` + mustJSONString(text) + `}]}`
	}
	for _, ex := range []struct{ msgs []string }{
		{[]string{msg("user", "t1")}},
		{[]string{msg("user", "t1"), msg("assistant", "r1"), msg("user", "t2")}},
		{[]string{msg("user", "t1"), msg("assistant", "r1"), msg("user", "t2, in other words")}},
	} {
		up.Enqueue(wiretest.AnthropicStream("m", "ok", nil, wiretest.Usage{Input: 10, Output: 1}))
		body := `{"model":"m","max_tokens":64,"stream":true,"system":"S","messages":[` + strings.Join(ex.msgs, ",") + `]}`
		resp, err := http.Post(srv.URL+"/v1/messages", "application/json", bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	srv.Close()
	if err := px.Close(); err != nil {
		t.Fatal(err)
	}
	list, err := st.List(ctx)
	st.Close()
	if err != nil || len(list) != 2 {
		t.Fatalf("%d conversations (err %v), want the session and its fork", len(list), err)
	}
	parent, fork := list[0].ID, list[1].ID
	if strings.HasPrefix(parent, fork) {
		parent, fork = fork, parent
	}
	stdout, stderr, code := inproc(t, "log", "show", fork, "--db", db)
	if want := "forked from conversation " + parent + " at turn 2 (its input); 1 shared turn(s)"; code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("log show %s: exit %d, want %q in:\n%s%s", fork, code, want, stdout, stderr)
	}
	stdout, stderr, code = inproc(t, "log", "show", fork, "--db", db, "--json")
	var out struct {
		ForkedFrom *struct {
			Conversation string `json:"conversation"`
			Turn, Round  int
			SharedTurns  int `json:"shared_turns"`
		} `json:"forked_from"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); code != 0 || err != nil {
		t.Fatalf("log show --json: exit %d (%v): %s", code, err, stderr)
	}
	if f := out.ForkedFrom; f == nil || f.Conversation != parent || f.Turn != 2 || f.Round != 0 || f.SharedTurns != 1 {
		t.Errorf("forked_from %+v, want %s at turn 2, round 0, 1 shared turn", f, parent)
	}
	stdout, _, _ = inproc(t, "log", "show", parent, "--db", db, "--json")
	if strings.Contains(stdout, "forked_from") {
		t.Errorf("the parent names a fork origin:\n%s", stdout)
	}
	checkLogListFork(t, db, parent, fork)
}

// checkLogListFork checks "log list" on a store holding parent and its
// fork (at turn 2): the fork's line names its parent, the parent's no
// fork; --json carries the link on the fork alone.
func checkLogListFork(t *testing.T, db, parent, fork string) {
	t.Helper()
	stdout, stderr, code := inproc(t, "log", "list", "--db", db)
	if code != 0 {
		t.Fatalf("log list: exit %d: %s", code, stderr)
	}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n")[1:] {
		id, _, _ := strings.Cut(line, " ")
		named := strings.Contains(line, "fork of "+parent+" at turn 2: t1")
		if named != (id == fork) {
			t.Errorf("log list: line of %s names the fork's parent: %v, want %v:\n%s", id, named, id == fork, stdout)
		}
	}
	stdout, stderr, code = inproc(t, "log", "list", "--db", db, "--json")
	var list []struct {
		ID         string `json:"id"`
		Turns      int    `json:"turns"`
		ForkedFrom *struct {
			Conversation string `json:"conversation"`
			Turn         int    `json:"turn"`
		} `json:"forked_from"`
	}
	if err := json.Unmarshal([]byte(stdout), &list); code != 0 || err != nil || len(list) != 2 {
		t.Fatalf("log list --json: exit %d (%v), %d conversations: %s", code, err, len(list), stderr)
	}
	for _, c := range list {
		switch f := c.ForkedFrom; {
		case c.Turns == 0:
			t.Errorf("log list --json: %s has no summary fields", c.ID)
		case c.ID == fork && (f == nil || f.Conversation != parent || f.Turn != 2):
			t.Errorf("log list --json: fork %s forked_from %+v, want %s at turn 2", c.ID, f, parent)
		case c.ID == parent && f != nil:
			t.Errorf("log list --json: parent %s names a fork origin %+v", c.ID, f)
		}
	}
}
