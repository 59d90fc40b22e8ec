package redact

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://generativelanguage.example/v1beta/models/g:generateContent?key=AIzaSECRET",
			"https://generativelanguage.example/v1beta/models/g:generateContent?key=REDACTED"},
		{"http://h/p?alt=sse&key=SECRET&x=1", "http://h/p?alt=sse&key=REDACTED&x=1"},
		{`Post "http://127.0.0.1:1/x?api_key=SECRET": dial tcp: refused`, `Post "http://127.0.0.1:1/x?api_key=REDACTED": dial tcp: refused`},
		{"?access_token=SECRET#frag", "?access_token=REDACTED#frag"},
		{"?X-Goog-Api-Key=SECRET", "?X-Goog-Api-Key=REDACTED"},
		{"?client_secret=SECRET&sig=SECRET2", "?client_secret=REDACTED&sig=REDACTED"},
		{"https://user:SECRET@host/p", "https://user:REDACTED@host/p"},
		{"Authorization: Bearer sk-SECRETSECRET", "Authorization: REDACTED"},
		{"x-api-key: sk-ant-SECRET", "x-api-key: REDACTED"},
		{"x-goog-api-key=SECRET", "x-goog-api-key=REDACTED"},
		{"sent bearer sk-SECRETSECRET upstream", "sent bearer REDACTED upstream"},
		{"postgres://u:SECRET@db/x password=SECRET2", "postgres://u:REDACTED@db/x password=REDACTED"},
		// Nothing to redact.
		{"http://127.0.0.1:8787/v1/messages?beta=true", "http://127.0.0.1:8787/v1/messages?beta=true"},
		{"harness proxy: conversation px-1 turn 2 (200, 1.2 KiB)", "harness proxy: conversation px-1 turn 2 (200, 1.2 KiB)"},
		{"https://user@host/p", "https://user@host/p"},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
		if strings.Contains(Text(tc.in), "SECRET") {
			t.Errorf("Text(%q) keeps the secret", tc.in)
		}
	}
}

// TestErrorURL: the message a failed request's *url.Error carries quotes
// the URL with its query; Error redacts it and keeps the chain.
func TestErrorURL(t *testing.T) {
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://127.0.0.1:1/v1beta/models/m:generateContent?key=SECRET", nil)
	_, err := (&http.Client{}).Do(req)
	if err == nil {
		t.Fatal("a request to port 1 succeeded")
	}
	if !strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("the raw error no longer quotes the URL (%v): the test checks nothing", err)
	}
	wrapped := fmt.Errorf("calling: %w", err)
	for _, e := range []error{err, wrapped} {
		r := Error(e)
		if strings.Contains(r.Error(), "SECRET") || !strings.Contains(r.Error(), "key="+mask) {
			t.Errorf("Error(%v) = %q", e, r)
		}
		var ue *url.Error
		if !errors.As(r, &ue) {
			t.Errorf("Error(%v) lost the *url.Error", e)
		}
	}
	var ue *url.Error
	if errors.As(Error(err), &ue); strings.Contains(ue.URL, "SECRET") {
		t.Errorf("the unwrapped *url.Error keeps the key: %q", ue.URL)
	}
	if Error(nil) != nil {
		t.Error("Error(nil) != nil")
	}
	plain := errors.New("no credential")
	if Error(plain) != plain {
		t.Error("an error without a credential was wrapped")
	}
	ctxErr := fmt.Errorf("x?key=s: %w", context.Canceled)
	if !errors.Is(Error(ctxErr), context.Canceled) {
		t.Error("errors.Is lost context.Canceled")
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"http://h/p?key=SECRET", "Authorization: Bearer abcdefghij", "https://u:p@h", "a=b&c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once := Text(s)
		if Text(once) != once {
			t.Errorf("Text is not idempotent on %q: %q then %q", s, once, Text(once))
		}
	})
}
