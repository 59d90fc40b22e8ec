package postgres

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// FuzzParseErrorHidesPassword: whatever a connection string that does not
// parse holds, its error never shows the password.
func FuzzParseErrorHidesPassword(f *testing.F) {
	f.Add("postgres://u:", "s3cr3t", "@[::1/db")
	f.Add("postgres://u:", "pw", "@host:port/db")
	f.Add("host=/tmp password=", "s3cr3t", " port=abc")
	f.Add("postgres://u:", "p@ss:w/rd", "@h:99999/db?sslmode=x")
	f.Add("user=u password='", "with space", "' port=-1")
	f.Fuzz(func(t *testing.T, head, pw, tail string) {
		dsn := head + pw + tail
		_, err := pgxpool.ParseConfig(dsn)
		if err == nil {
			return
		}
		msg := parseError(dsn, err).Error()
		if len(pw) >= 4 && strings.Contains(msg, pw) && !strings.Contains("postgres store: the connection string does not parse (not shown: it may hold a password)", pw) {
			t.Fatalf("the error of %q shows the password %q: %s", dsn, pw, msg)
		}
	})
}
