package attempt

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestMiddlewareRecordsErrorResponse(t *testing.T) {
	body := `{"error":{"message":"slow down","type":"rate_limit_error"}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, body)
	}))
	defer srv.Close()
	ctx, info := With(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	res, err := Middleware(req, http.DefaultClient.Do)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(got) != body {
		t.Errorf("the body handed on = %q, want it unchanged", got)
	}
	if info.Status() != 429 || info.Header().Get("Retry-After") != "3" || string(info.Body()) != body {
		t.Errorf("info = %d %v %q", info.Status(), info.Header(), info.Body())
	}
	if m := Message(info.Body()); m != "slow down" {
		t.Errorf("Message = %q", m)
	}
}

func TestMiddlewareWithoutInfo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL, nil)
	res, err := Middleware(req, http.DefaultClient.Do)
	if err != nil || res.StatusCode != 200 {
		t.Fatal(err)
	}
	res.Body.Close()
}

func TestMessage(t *testing.T) {
	long := strings.Repeat("é", 400)
	for body, want := range map[string]string{
		`{"error":{"message":"prompt is too long"}}`:                   "prompt is too long",
		`{"type":"error","error":{"type":"x","message":"overloaded"}}`: "overloaded",
		`{"error":"model not found"}`:                                  "model not found",
		`{"object":"error","message":"max context","code":400}`:        "max context",
		`{"detail":"Not Found"}`:                                       "Not Found",
		`{"detail":[{"loc":["body"]}]}`:                                `[{"loc":["body"]}]`,
		"upstream connect error\n":                                     "upstream connect error",
		long:                                                           strings.Repeat("é", 250) + "…",
	} {
		if got := Message([]byte(body)); got != want {
			t.Errorf("Message(%.40q) = %.60q, want %.60q", body, got, want)
		}
	}
}

func FuzzMessage(f *testing.F) {
	for _, s := range []string{`{"error":{"message":"x"}}`, `{"error":3}`, `{"detail":null}`, "plain", "", "\xff\xfe"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		m := Message(body)
		if len(m) > len(body)+len("…") {
			t.Fatalf("message (%d bytes) longer than its body (%d)", len(m), len(body))
		}
	})
}
