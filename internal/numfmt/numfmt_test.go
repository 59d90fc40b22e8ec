package numfmt

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0", 7: "7", 999: "999", 1000: "1,000", -1000: "-1,000", 123456: "123,456", 1234567: "1,234,567",
		-12: "-12", math.MinInt64: "-9,223,372,036,854,775,808", math.MaxInt64: "9,223,372,036,854,775,807",
	} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// FuzzThousands: removing the commas gives the number back, and every
// group after the first has three digits.
func FuzzThousands(f *testing.F) {
	for _, n := range []int64{0, -1, 1000, math.MinInt64, math.MaxInt64} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, n int64) {
		got := Thousands(n)
		if back, err := strconv.ParseInt(strings.ReplaceAll(got, ",", ""), 10, 64); err != nil || back != n {
			t.Fatalf("%q does not read back as %d", got, n)
		}
		groups := strings.Split(strings.TrimPrefix(got, "-"), ",")
		if len(groups[0]) == 0 || len(groups[0]) > 3 {
			t.Fatalf("%q: first group %q", got, groups[0])
		}
		for _, g := range groups[1:] {
			if len(g) != 3 {
				t.Fatalf("%q: group %q", got, g)
			}
		}
	})
}
