package toolselect

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTokenize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"get_current_user", "get current user"},
		{"getCurrentUser", "get current user"},
		{"HTTPServerConfig", "http server config"},
		{"list-open-issues", "list open issu"},
		{"Created the issues", "creat issu"},
		{"creating a new post", "creat new post"},
		{"who am I? me!", "me"},
		{"v2 OAuth2Token", "v2 o auth2 token"},
		{"running stopped added", "run stop add"},
		{"status address analysis", "status address analysis"},
		{"Crème brûlée", "crèm brûlé"},
		{"", ""},
	} {
		if got := strings.Join(tokenize(tc.in), " "); got != tc.want {
			t.Errorf("Tokenize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzTokenize: tokens are never empty, never longer than the bound, and
// lowercase; tokenizing is deterministic.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"get_current_user", "HTTPServer", "ÀÉÎõü snake_Case-kebab", "\xff\xfe", strings.Repeat("a", 100), "12abc34DEF"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a := tokenize(s)
		b := tokenize(s)
		if strings.Join(a, "\x00") != strings.Join(b, "\x00") {
			t.Fatal("not deterministic")
		}
		for _, tok := range a {
			if tok == "" || utf8.RuneCountInString(tok) > 40 {
				t.Fatalf("token %q", tok)
			}
			if strings.ToLower(tok) != tok {
				t.Fatalf("token %q not lowercase", tok)
			}
		}
	})
}
