package harness

import (
	"errors"
	"math"
	"testing"
)

// TestUsageAddSaturates: sums of huge counts stop at the largest int
// instead of wrapping negative.
func TestUsageAddSaturates(t *testing.T) {
	big := Usage{Input: math.MaxInt, Cached: math.MaxInt, CacheWrite: math.MaxInt, Output: math.MaxInt}
	got := big.Add(big)
	if got != big {
		t.Fatalf("MaxInt + MaxInt = %+v", got)
	}
	if got := (Usage{Input: 2, Output: 3}).Add(Usage{Input: 5, Cached: 1, Output: 4}); got != (Usage{Input: 7, Cached: 1, Output: 7}) {
		t.Fatalf("small sum %+v", got)
	}
	if got := (Usage{Input: math.MinInt}).Add(Usage{Input: -1}); got.Input != math.MinInt {
		t.Fatalf("MinInt - 1 = %d", got.Input)
	}
}

func TestUsageValidate(t *testing.T) {
	for _, tc := range []struct {
		u  Usage
		ok bool
	}{
		{Usage{}, true},
		{Usage{Input: 100, Cached: 100, CacheWrite: 0, Output: 5}, true},
		{Usage{Input: MaxUsageTokens, Output: MaxUsageTokens}, true},
		{Usage{Input: -1}, false},
		{Usage{Output: -1}, false},
		{Usage{Input: 1, Cached: -1}, false},
		{Usage{Input: 1, Cached: 2}, false},
		{Usage{Input: 1, CacheWrite: 2}, false},
		{Usage{Input: MaxUsageTokens + 1}, false},
		{Usage{Input: math.MaxInt}, false},
	} {
		err := tc.u.Validate()
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalidResponse)) {
			t.Errorf("%+v: %v", tc.u, err)
		}
	}
}
