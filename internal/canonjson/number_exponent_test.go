package canonjson

import (
	"strings"
	"testing"
)

// TestNumberAnyExponent: literals that denote the same value get the same
// spelling whatever the size of their exponent, beyond int64 included.
func TestNumberAnyExponent(t *testing.T) {
	for _, tc := range []struct {
		want string
		ins  []string
	}{
		{"1e+9223372036854775807", []string{"1e9223372036854775807", "10e9223372036854775806", "0.1e9223372036854775808", "1000e+9223372036854775804"}},
		{"1e+9223372036854775808", []string{"1e9223372036854775808", "10E9223372036854775807", "100e9223372036854775806"}},
		{"1e-9223372036854775809", []string{"1e-9223372036854775809", "10e-9223372036854775810", "0.01e-9223372036854775807"}},
		{"-1.23e+99999999999999999999999999999", []string{"-123e99999999999999999999999999997", "-1.230e99999999999999999999999999999"}},
		{"1.5e-99999999999999999999999999999", []string{"15e-100000000000000000000000000000", "0.00015e-99999999999999999999999999995"}},
		{"0", []string{"0e99999999999999999999999999999", "-0.0e-99999999999999999999999999999"}},
		{"1000", []string{"1e3", "0.0000000000000000000000000000001e34"}},
	} {
		for _, in := range tc.ins {
			if got := Number(in); got != tc.want {
				t.Errorf("Number(%q) = %q, want %q", in, got, tc.want)
			}
		}
	}
}

// TestNumberHugeExponentIsLinear: an exponent of a million digits costs
// a pass over them (big-integer decimal conversion would take about a
// minute).
func TestNumberHugeExponentIsLinear(t *testing.T) {
	nines := strings.Repeat("9", 1_000_000)
	want := "1e+1" + strings.Repeat("0", 1_000_000)
	for _, in := range []string{"1e1" + strings.Repeat("0", 1_000_000), "10e" + nines, "0.1e1" + strings.Repeat("0", 999_999) + "1"} {
		if got := Number(in); got != want {
			t.Errorf("Number(%.20q…) = %.20q…, want %.20q…", in, got, want)
		}
	}
	if got := Number("-25e-" + nines); got != "-2.5e-"+strings.Repeat("9", 999_999)+"8" {
		t.Errorf("Number(-25e-9…) = %.30q…", got)
	}
}
