package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
)

// getStats reads GET /stats with the given headers.
func getStats(t *testing.T, url string, hdr map[string]string) (Stats, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/stats", nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var s Stats
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("stats: %v: %s", err, raw)
	}
	return s, resp.Header.Get("X-Harness-Tenant"), string(raw)
}

// TestTenantStats: two credentials' conversations through one proxy with
// tenants; each credential's /stats shows its own conversations and
// totals only, a request without a credential sees nothing, the admin
// token everything, and no body names a credential.
func TestTenantStats(t *testing.T) {
	r := newRig(t, &Options{TenantSecret: []byte("server secret"), AdminToken: "admin-token-1"})
	wc := wireCases[0]
	keys := map[string]int{"sk-alice-0001": 1, "sk-bob-0002": 3}
	for key, convs := range keys {
		for c := range convs {
			r.up.Enqueue(wc.reply("m", "hi", nil, wiretest.Usage{Input: 10, Output: 1}))
			status, _, _ := r.post(wc.path, wc.body("m", fmt.Sprintf("task %d", c), nil), map[string]string{"x-api-key": key})
			if status != http.StatusOK {
				t.Fatalf("status %d", status)
			}
		}
	}
	if err := r.px.savings.flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	tenants := map[string]string{}
	for key, convs := range keys {
		s, tenant, raw := getStats(t, r.srv.URL, map[string]string{"x-api-key": key})
		tenants[key] = tenant
		if s.Savings == nil || s.Savings.Calls != int64(convs) || s.Savings.TokensSent != int64(10*convs) {
			t.Errorf("%s: savings show %+v; want %d calls of its own", key, s.Savings, convs)
		}
		if s.Requests != int64(convs) || len(s.ByConversation) != convs || s.Upstream.Input != int64(10*convs) {
			t.Errorf("%s: stats show %d requests, %d conversations, %d input tokens; want %d of its own", key, s.Requests, len(s.ByConversation), s.Upstream.Input, convs)
		}
		for id := range s.ByConversation {
			if !strings.HasPrefix(id, tenant+"-") {
				t.Errorf("%s (tenant %s) sees conversation %s", key, tenant, id)
			}
		}
		for other := range keys {
			if strings.Contains(raw, other) {
				t.Errorf("stats name the credential %s", other)
			}
		}
	}
	if tenants["sk-alice-0001"] == tenants["sk-bob-0002"] || tenants["sk-alice-0001"] == "" {
		t.Errorf("tenants %v", tenants)
	}
	// The same key as a bearer token is the same tenant.
	if _, tenant, _ := getStats(t, r.srv.URL, map[string]string{"Authorization": "Bearer sk-alice-0001"}); tenant != tenants["sk-alice-0001"] {
		t.Errorf("bearer tenant %s, x-api-key tenant %s", tenant, tenants["sk-alice-0001"])
	}
	if s, _, _ := getStats(t, r.srv.URL, nil); s.Requests != 0 || len(s.ByConversation) != 0 || s.BytesIn != 0 {
		t.Errorf("without a credential: %+v, want nothing", s)
	}
	if s, _, _ := getStats(t, r.srv.URL, map[string]string{"Authorization": "Bearer wrong-admin"}); s.Requests != 0 {
		t.Errorf("a wrong admin token sees %d requests", s.Requests)
	}
	if s, _, _ := getStats(t, r.srv.URL, map[string]string{"Authorization": "Bearer admin-token-1"}); s.Requests != 4 || len(s.ByConversation) != 4 {
		t.Errorf("admin sees %d requests, %d conversations; want 4, 4", s.Requests, len(s.ByConversation))
	}
}

// TestTenantOwnPage: a spill path is read as a page only when it is under
// a conversation folder of the caller's own tenant.
func TestTenantOwnPage(t *testing.T) {
	ws := t.TempDir()
	p, err := New(&Options{Upstream: "http://127.0.0.1:1", Workspace: ws, TenantSecret: []byte("s")})
	if err != nil {
		t.Fatal(err)
	}
	root := p.spillRootOf(context.Background())
	own := "t0123456789abcdef-px-1"
	tests := []struct {
		path string
		want bool
	}{
		{filepath.Join(root, own, "r1.txt"), true},
		{filepath.Join(root, "t0123456789abcdef-px-2", "r1.txt"), true},
		{filepath.Join(root, "tfedcba9876543210-px-1", "r1.txt"), false},
		{filepath.Join(root, own, "..", "tfedcba9876543210-px-1", "r1.txt"), false},
		{filepath.Join(root, "..", "secret"), false},
		{"", false},
	}
	for _, tt := range tests {
		if got := p.ownPage(own, tt.path, root) != ""; got != tt.want {
			t.Errorf("ownPage(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
	if got := p.ownPage("px-no-tenant", filepath.Join(root, own, "r1.txt"), root); got != "" {
		t.Errorf("a conversation without a tenant reads a tenant's page")
	}
}

// TestTenantOwnTotals: every total a tenant's /stats shows is its own
// (results decided and cut, conversations, bytes, tokens), not 0 and not
// another tenant's, also once its conversations have left ByConversation;
// the admin sees the sum.
func TestTenantOwnTotals(t *testing.T) {
	r := newRig(t, &Options{TenantSecret: []byte("server secret"), AdminToken: "admin-token-1"})
	wc := wireCases[0]
	type sent struct{ results, cut int }
	want := map[string]sent{}
	for key, big := range map[string]bool{"sk-alice-0001": true, "sk-bob-0002": false} {
		size := 100
		if big {
			size = 40 << 10
		}
		steps := []step{{id: "call_1", tool: "Bash", args: `{"command":"cat package-lock.json"}`, result: lockFile(size)}}
		r.up.Enqueue(wc.reply("m", "done", nil, wiretest.Usage{Input: 10, Output: 1}))
		if status, _, _ := r.post(wc.path, wc.body("m", "read it", steps), map[string]string{"x-api-key": key}); status != http.StatusOK {
			t.Fatalf("status %d", status)
		}
		w := sent{results: 1}
		if big {
			w.cut = 1
		}
		want[key] = w
	}
	// The per-conversation figures are bounded; a tenant's totals are not.
	r.px.mu.Lock()
	r.px.stats.ByConversation, r.px.stats.served = nil, nil
	r.px.mu.Unlock()
	var sum Stats
	for key, w := range want {
		s, _, _ := getStats(t, r.srv.URL, map[string]string{"x-api-key": key})
		if s.Requests != 1 || s.Conversations != 1 || s.ResultsDecided != int64(w.results) || s.ResultsCut != int64(w.cut) ||
			s.BytesIn == 0 || s.Upstream.Input != 10 {
			t.Errorf("%s sees requests %d, conversations %d, results %d decided %d cut, %d bytes in, %d input tokens; want 1, 1, %d, %d, its bytes, 10",
				key, s.Requests, s.Conversations, s.ResultsDecided, s.ResultsCut, s.BytesIn, s.Upstream.Input, w.results, w.cut)
		}
		if (w.cut > 0) != (s.BytesRemoved > 0) {
			t.Errorf("%s: %d bytes removed with %d cut", key, s.BytesRemoved, w.cut)
		}
		sum.Requests += s.Requests
		sum.BytesIn += s.BytesIn
		sum.ResultsCut += s.ResultsCut
	}
	admin, _, _ := getStats(t, r.srv.URL, map[string]string{"Authorization": "Bearer admin-token-1"})
	if admin.Requests != sum.Requests || admin.BytesIn != sum.BytesIn || admin.ResultsCut != sum.ResultsCut {
		t.Errorf("admin sees %d requests, %d bytes in, %d cut; the tenants sum to %d, %d, %d",
			admin.Requests, admin.BytesIn, admin.ResultsCut, sum.Requests, sum.BytesIn, sum.ResultsCut)
	}
	if s, _, _ := getStats(t, r.srv.URL, nil); s.Requests != 0 || s.Conversations != 0 {
		t.Errorf("without a credential: %d requests, %d conversations; want nothing", s.Requests, s.Conversations)
	}
}
