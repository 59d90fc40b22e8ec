package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
)

// TestForwardsUnchanged: what the proxy does not read — other paths,
// bodies it cannot parse, upstream errors — passes through unchanged both
// ways: method, path, query, body, status, headers (retry-after) and body.
func TestForwardsUnchanged(t *testing.T) {
	tests := []struct {
		name, method, path, body string
		reply                    wiretest.Reply
	}{
		{"other path", http.MethodGet, "/v1/models?limit=2", "", wiretest.JSON(`{"data":[{"id":"m"}]}`)},
		{"head root", http.MethodHead, "/", "", wiretest.Reply{}},
		{"count tokens", http.MethodPost, "/v1/messages/count_tokens", `{"messages":[]}`, wiretest.JSON(`{"input_tokens":3}`)},
		{"unreadable model call", http.MethodPost, "/v1/messages", `{"messages": [ nope`, wiretest.Error(400, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`)},
		{"rate limited", http.MethodPost, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			wiretest.Reply{Status: 429, Header: http.Header{"Retry-After": {"17"}, "X-Request-Id": {"req_1"}}, Body: `{"error":{"message":"slow down","type":"rate_limit"}}`}},
		{"overloaded stream", http.MethodPost, "/v1/messages", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			wiretest.Reply{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil)
			r.up.Enqueue(tc.reply)
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			req, _ := http.NewRequest(tc.method, r.srv.URL+tc.path, body)
			req.Header.Set("X-Custom", "kept")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want := tc.reply.Status
			if want == 0 {
				want = 200
			}
			if resp.StatusCode != want {
				t.Errorf("status %d, want %d", resp.StatusCode, want)
			}
			if tc.method != http.MethodHead && string(got) != tc.reply.Body {
				t.Errorf("body %q, want %q", got, tc.reply.Body)
			}
			for k := range tc.reply.Header {
				if resp.Header.Get(k) != tc.reply.Header.Get(k) {
					t.Errorf("header %s = %q, want %q", k, resp.Header.Get(k), tc.reply.Header.Get(k))
				}
			}
			reqs := r.up.Requests()
			if len(reqs) != 1 {
				t.Fatalf("upstream got %d requests", len(reqs))
			}
			up := reqs[0]
			if up.Method != tc.method || up.Path != strings.Split(tc.path, "?")[0] || string(up.Body) != tc.body || up.Header.Get("X-Custom") != "kept" {
				t.Errorf("upstream got %s %s %q (X-Custom %q)", up.Method, up.Path, up.Body, up.Header.Get("X-Custom"))
			}
		})
	}
}

// TestLimits: an oversized request is refused before it reaches the
// upstream, and an oversized answer is refused, each with a clear error.
func TestLimits(t *testing.T) {
	t.Run("request", func(t *testing.T) {
		r := newRig(t, &Options{MaxRequestBytes: 1000})
		status, _, got := r.post("/v1/messages", bytes.Repeat([]byte("x"), 2000), nil)
		if status != http.StatusRequestEntityTooLarge || !strings.Contains(string(got), "larger than 1000 bytes") {
			t.Errorf("status %d body %s", status, got)
		}
		if n := len(r.up.Requests()); n != 0 {
			t.Errorf("the upstream got %d requests", n)
		}
	})
	t.Run("response", func(t *testing.T) {
		r := newRig(t, &Options{MaxResponseBytes: 100})
		r.up.Enqueue(wiretest.JSON(strings.Repeat(" ", 500) + "{}"))
		status, _, got := r.post("/v1/chat/completions", []byte(`{"model":"m","messages":[]}`), nil)
		if status != http.StatusBadGateway || !strings.Contains(string(got), "response limit of 100") {
			t.Errorf("status %d body %s", status, got)
		}
	})
}

// TestCredentials: the client's credentials reach the upstream as sent and
// appear in neither the store nor the log; the conversation header sets
// the conversation and is not forwarded.
func TestCredentials(t *testing.T) {
	wc := wireCases[0]
	r := newRig(t, nil)
	r.up.Enqueue(wc.reply("m", "", []wiretest.Call{{ID: "c1", Name: "Bash", Args: `{}`}}, wiretest.Usage{}),
		wc.reply("m", "done", nil, wiretest.Usage{}))
	hdr := map[string]string{"X-Api-Key": "sk-ant-secret-1", "Authorization": "Bearer sk-secret-2", "X-Goog-Api-Key": "goog-secret-3",
		ConversationHeader: "my-conv"}
	r.post(wc.path, wc.body("m", "hi", nil), hdr)
	r.post(wc.path, wc.body("m", "hi", []step{{id: "c1", tool: "Bash", args: `{}`, result: strings.Repeat("line\n", 10000)}}), hdr)
	if err := r.px.Close(); err != nil {
		t.Fatal(err)
	}
	for _, q := range r.up.Requests() {
		if q.Header.Get("X-Api-Key") != "sk-ant-secret-1" || q.Header.Get("Authorization") != "Bearer sk-secret-2" || q.Header.Get("X-Goog-Api-Key") != "goog-secret-3" {
			t.Errorf("credentials not forwarded: %v", q.Header)
		}
		if q.Header.Get(ConversationHeader) != "" {
			t.Errorf("the conversation header was forwarded")
		}
	}
	if _, err := r.st.Load(context.Background(), "my-conv"); err != nil {
		t.Errorf("the conversation header did not name the conversation: %v", err)
	}
	r.st.Close()
	for _, p := range []string{r.dbPath, r.dbPath + "-wal"} {
		b, _ := os.ReadFile(p)
		for _, secret := range []string{"sk-ant-secret-1", "sk-secret-2", "goog-secret-3"} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds %s", p, secret)
			}
		}
	}
	if strings.Contains(r.log.String(), "secret") {
		t.Errorf("the log holds a credential:\n%s", r.log.String())
	}
}

// TestRedirectNotFollowed: a redirect from the upstream reaches the client
// as it is; the proxy never sends the credentials elsewhere.
func TestRedirectNotFollowed(t *testing.T) {
	r := newRig(t, nil)
	r.up.Enqueue(wiretest.Reply{Status: http.StatusTemporaryRedirect, Header: http.Header{"Location": {"http://127.0.0.1:1/elsewhere"}}})
	req, _ := http.NewRequest(http.MethodGet, r.srv.URL+"/v1/models", nil)
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") == "" {
		t.Errorf("status %d location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestRestartKeepsDecisions: a proxy started on the same store sends an
// earlier result with exactly the bytes the first proxy sent, spills
// nothing again and records nothing twice.
func TestRestartKeepsDecisions(t *testing.T) {
	wc := wireCases[1]
	lock := lockFile(100 << 10)
	read := step{id: "c1", tool: "exec_command", args: `{"cmd":"cat package-lock.json"}`, result: lock}
	r := newRig(t, nil)
	r.up.Enqueue(wc.reply("m", "", []wiretest.Call{{ID: "c2", Name: "exec_command", Args: `{}`}}, wiretest.Usage{}))
	r.post(wc.path, wc.body("m", "hi", []step{read}), nil)
	if err := r.px.Close(); err != nil {
		t.Fatal(err)
	}
	first := contents(t, wc.format, r.up.Requests()[0].Body)[0]

	px2, err := New(&Options{Upstream: r.up.URL, Store: r.st, Workspace: r.ws})
	if err != nil {
		t.Fatal(err)
	}
	r.srv.Config.Handler = px2
	r.up.Enqueue(wc.reply("m", "ok", nil, wiretest.Usage{}))
	r.post(wc.path, wc.body("m", "hi", []step{read, {id: "c2", tool: "exec_command", args: `{}`, result: "small"}}), nil)
	if err := px2.Close(); err != nil {
		t.Fatal(err)
	}
	second := contents(t, wc.format, r.up.Requests()[1].Body)[0]
	if first != second {
		t.Errorf("after a restart the result was sent with other bytes")
	}
	if s := px2.Stats(); s.ResultsDecided != 1 || s.ResultsReused != 1 {
		t.Errorf("stats after restart %+v", s)
	}
	list, _ := r.st.List(context.Background())
	conv, err := r.st.Load(context.Background(), list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(conv.Turns) != 1 || len(conv.Turns[0].Rounds) != 3 {
		t.Errorf("stored rounds %v, want one turn of 3", roundsOf(conv))
	}
}

// TestStatsEndpoint: GET /stats answers JSON without reaching the upstream.
func TestStatsEndpoint(t *testing.T) {
	r := newRig(t, nil)
	resp, err := http.Get(r.srv.URL + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s Stats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d: %v", resp.StatusCode, err)
	}
	if len(r.up.Requests()) != 0 {
		t.Errorf("/stats reached the upstream")
	}
}

// TestSpillPageNotSpilledAgain: reading the spill file back with the
// agent's own tool gives a page that is cut to the ceiling, not a second
// spill file.
func TestSpillPageNotSpilledAgain(t *testing.T) {
	wc := wireCases[0]
	r := newRig(t, nil)
	lock := lockFile(200 << 10)
	r.up.Enqueue(wc.reply("m", "", nil, wiretest.Usage{}), wc.reply("m", "", nil, wiretest.Usage{}))
	read := step{id: "c1", tool: "Bash", args: `{"command":"cat package-lock.json"}`, result: lock}
	r.post(wc.path, wc.body("m", "hi", []step{read}), nil)
	var shown string
	_ = json.Unmarshal([]byte(contents(t, wc.format, r.up.Requests()[0].Body)[0]), &shown)
	path := spillPathRE.FindString(shown)
	if path == "" {
		t.Fatal("no spill path")
	}
	page := step{id: "c2", tool: "Read", args: `{"file_path":` + mustJSON(path) + `}`, result: lock}
	r.post(wc.path, wc.body("m", "hi", []step{read, page}), nil)
	var pageShown string
	_ = json.Unmarshal([]byte(contents(t, wc.format, r.up.Requests()[1].Body)[1]), &pageShown)
	if !strings.Contains(pageShown, "spill file already") {
		t.Errorf("the page of the spill file was not recognised:\n%.600s", pageShown[max(0, len(pageShown)-600):])
	}
	if p := spillPathRE.FindString(pageShown); p != "" && p != path {
		t.Errorf("the page was spilled again to %s", p)
	}
}

// TestForgottenConversationReloads: beyond the bound, an idle
// conversation is forgotten; seen again, it is reloaded from the store and
// its results are sent with the same bytes, not decided again.
func TestForgottenConversationReloads(t *testing.T) {
	wc := wireCases[2]
	r := newRig(t, nil)
	r.px.maxConvs = 1
	lock := lockFile(60 << 10)
	for range 3 {
		r.up.Enqueue(wc.reply("m", "", []wiretest.Call{{ID: "c9", Name: "shell", Args: `{}`}}, wiretest.Usage{}))
	}
	a := wc.body("m", "conversation A", []step{{id: "c1", tool: "shell", args: `{}`, result: lock}})
	r.post(wc.path, a, nil)
	// A conversation whose writes are still queued is not forgotten
	// (TestEvictKeepsQueuedWrites): A's are stored before B arrives.
	if err := r.px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.post(wc.path, wc.body("m", "conversation B", nil), nil)
	r.post(wc.path, a, nil)
	reqs := r.up.Requests()
	if first, again := contents(t, wc.format, reqs[0].Body)[0], contents(t, wc.format, reqs[2].Body)[0]; first != again {
		t.Errorf("the reloaded conversation sent its result with other bytes")
	}
	if err := r.px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := r.px.Stats(); s.ResultsDecided != 1 || s.ResultsReused != 1 || s.Conversations != 3 {
		t.Errorf("stats %+v", s)
	}
}

// TestReadBodyAnnounced: a body read by its Content-Length costs what
// arrives, not what the client announced, and arrives whole.
func TestReadBodyAnnounced(t *testing.T) {
	r := newRig(t, nil)
	honest := bytes.Repeat([]byte("h"), 3<<20)
	for _, tc := range []struct {
		name     string
		announce int64
		body     []byte
		wantErr  bool
		maxAlloc uint64
	}{
		{"announces 64 MiB, sends 10 bytes", 64 << 20, []byte("0123456789"), true, 1 << 20},
		{"announces 1 MiB, sends nothing", 1 << 20, nil, true, 1 << 20},
		{"honest 3 MiB", int64(len(honest)), honest, false, 4 * uint64(len(honest))},
		{"honest 10 bytes", 10, []byte("0123456789"), false, 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/v1/messages", bytes.NewReader(tc.body))
			req.ContentLength = tc.announce
			w := httptest.NewRecorder()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			got, err := r.px.readBody(w, req)
			runtime.ReadMemStats(&after)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want one: %v", err, tc.wantErr)
			}
			if !tc.wantErr && !bytes.Equal(got.bytes(), tc.body) {
				t.Errorf("read %d bytes, want the %d sent", len(got.bytes()), len(tc.body))
			}
			if tc.wantErr && w.Code != http.StatusBadRequest {
				t.Errorf("status %d, want 400", w.Code)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > tc.maxAlloc {
				t.Errorf("reading allocated %d bytes, want at most %d", alloc, tc.maxAlloc)
			}
		})
	}
}
