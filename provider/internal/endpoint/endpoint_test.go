package endpoint

import (
	"strings"
	"testing"
)

func TestBaseURL(t *testing.T) {
	for _, c := range []struct {
		given, env, want string
		err              bool
	}{
		{"", "", "https://api.example/v1/", false},
		{"", "  http://127.0.0.1:8080/v1 ", "http://127.0.0.1:8080/v1/", false},
		{"http://localhost:1/x/", "http://ignored/", "http://localhost:1/x/", false},
		{"127.0.0.1:8080/v1", "", "", true},
		{"", "ftp://files/", "", true},
	} {
		got, err := BaseURL("p", c.given, c.env, "https://api.example/v1")
		if c.err {
			if err == nil || !strings.HasPrefix(err.Error(), "p: base URL") {
				t.Errorf("%q/%q: err %v, want a base URL error", c.given, c.env, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q/%q: %q, %v; want %q", c.given, c.env, got, err, c.want)
		}
	}
}
