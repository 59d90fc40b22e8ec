package proxy

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestServeRoutes: a loopback JSON POST registers a client route whose
// prefix then routes requests; anything else (another peer, a browser's
// Origin, a form POST, a GET, a missing folder, bad JSON) is refused and
// registers nothing.
func TestServeRoutes(t *testing.T) {
	r := newRig(t, nil)
	ws := t.TempDir()
	good := `{"Name":"claude","Workspace":` + jsonString(ws) + `,"ReadTool":"Read"}`
	tests := []struct {
		name, method, remote, ctype, origin, body string
		want                                      int
	}{
		{"loopback v4", "POST", "127.0.0.1:5000", "application/json", "", good, 200},
		{"loopback v6", "POST", "[::1]:5000", "application/json; charset=utf-8", "", good, 200},
		{"another host", "POST", "192.0.2.1:5000", "application/json", "", good, 403},
		{"a web page", "POST", "127.0.0.1:5000", "application/json", "http://evil.example", good, 400},
		{"a form", "POST", "127.0.0.1:5000", "text/plain", "", good, 400},
		{"a GET", "GET", "127.0.0.1:5000", "application/json", "", "", 400},
		{"no folder", "POST", "127.0.0.1:5000", "application/json", "", `{"Name":"claude","Workspace":"/no/such/folder"}`, 400},
		{"bad JSON", "POST", "127.0.0.1:5000", "application/json", "", `{"Name":`, 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, routesPath, strings.NewReader(tc.body))
			req.RemoteAddr = tc.remote
			req.Header.Set("Content-Type", tc.ctype)
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			before := len(r.px.routes)
			w := httptest.NewRecorder()
			r.px.ServeHTTP(w, req)
			if w.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.want, w.Body.String())
			}
			if tc.want != 200 {
				if len(r.px.routes) != before {
					t.Errorf("a refused request registered a route")
				}
				return
			}
			var got struct{ Prefix string }
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || !strings.HasPrefix(got.Prefix, routePrefix) {
				t.Fatalf("answer %s: %v", w.Body.String(), err)
			}
			stats := httptest.NewRecorder()
			r.px.ServeHTTP(stats, httptest.NewRequest(http.MethodGet, got.Prefix+"/stats", nil))
			if stats.Code != 200 {
				t.Errorf("the registered route answers %d", stats.Code)
			}
			c := r.px.routes[strings.TrimPrefix(got.Prefix, routePrefix)]
			if c == nil || c.Workspace != ws || c.ReadTool != "Read" {
				t.Errorf("route %+v", c)
			}
		})
	}
}
