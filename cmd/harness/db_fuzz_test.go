package main

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzIsDSN checks that --db is taken for a PostgreSQL database exactly
// when it is a postgres:// or postgresql:// URL (the prefixes pgx reads as
// a URL, in their case), and that such a value is never taken for a file.
func FuzzIsDSN(f *testing.F) {
	for _, s := range []string{
		"postgres://u:pw@localhost:5432/db", "postgresql:///db?host=/tmp", "harness.db", "./postgres://x",
		"POSTGRES://u@h/db", "postgres:/db", "postgres:", "", "postgresql://", "file:postgres://x", " postgres://h/db",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, db string) {
		got := isDSN(db)
		scheme, rest, _ := strings.Cut(db, ":")
		want := (scheme == "postgres" || scheme == "postgresql") && strings.HasPrefix(rest, "//")
		if got != want {
			t.Fatalf("isDSN(%q) = %v, want %v", db, got, want)
		}
		if u, err := url.Parse(db); got && err == nil && u.Scheme != scheme {
			t.Fatalf("isDSN(%q): a URL of scheme %q", db, u.Scheme)
		}
	})
}
