package benchcore

import (
	"slices"
	"strings"
	"testing"
)

// FuzzParsePricings checks that a --pricing list either names known
// price models, one per comma-separated item in order, or is refused with
// nothing returned.
func FuzzParsePricings(f *testing.F) {
	for _, s := range []string{"", " ", "openai", "anthropic, openai", "openai,", ",", "OpenAI", "openai,,anthropic", "x\x00"} {
		f.Add(s)
	}
	var known []string
	for _, p := range Pricings() {
		known = append(known, p.Name)
	}
	f.Fuzz(func(t *testing.T, list string) {
		got, err := ParsePricings(list)
		switch {
		case err != nil:
			if got != nil {
				t.Fatalf("%q: %v and %v", list, got, err)
			}
			return
		case strings.TrimSpace(list) == "":
			if !slices.Equal(got, defaultPricings) {
				t.Fatalf("%q: %v, want the defaults", list, got)
			}
			return
		}
		items := strings.Split(list, ",")
		if len(got) != len(items) {
			t.Fatalf("%q: %d names for %d items", list, len(got), len(items))
		}
		for i, n := range got {
			if !slices.Contains(known, n) || n != strings.TrimSpace(items[i]) {
				t.Fatalf("%q: item %d gave %q", list, i, n)
			}
		}
	})
}
