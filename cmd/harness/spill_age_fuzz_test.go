package main

import (
	"strings"
	"testing"
	"time"
)

// FuzzParseAge: --older-than never yields a negative age (an overflow of
// many days included), and an accepted day count is that many days.
func FuzzParseAge(f *testing.F) {
	for _, s := range []string{"7d", "36h", "1d12h", "0d", "d", "-1d", "1d-5h", "99999999999999d", "106751d", "106752d", "1d9223372036s", "", "1.5h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseAge(s)
		if err != nil {
			return
		}
		if d < 0 {
			t.Fatalf("parseAge(%q) = %s, negative", s, d)
		}
		if days, rest, ok := strings.Cut(s, "d"); ok && rest == "" && days != "" {
			if want := d / (24 * time.Hour); d%(24*time.Hour) != 0 || want < 0 {
				t.Fatalf("parseAge(%q) = %s, not whole days", s, d)
			}
		}
	})
}
