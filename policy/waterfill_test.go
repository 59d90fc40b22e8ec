package policy

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
)

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

func TestWaterFillSeedExamples(t *testing.T) {
	tests := []struct {
		name      string
		sizes     []int
		budget    int
		wantCap   int
		wantTotal int
		wantKept  []int
	}{
		{
			name:  "lopsided turn",
			sizes: []int{300, 420, 800, 8000, 8000, 8000, 8000}, budget: 24_000,
			wantCap: 5_620, wantTotal: 24_000,
			wantKept: []int{300, 420, 800, 5620, 5620, 5620, 5620},
		},
		{
			name:  "seven full bodies",
			sizes: []int{8000, 8000, 8000, 8000, 8000, 8000, 8000}, budget: 24_000,
			wantCap: 3_428, wantTotal: 23_996,
			wantKept: []int{3428, 3428, 3428, 3428, 3428, 3428, 3428},
		},
		{
			name:  "order of the results does not matter",
			sizes: []int{8000, 300, 8000, 420, 8000, 800, 8000}, budget: 24_000,
			wantCap: 5_620, wantTotal: 24_000,
			wantKept: []int{5620, 300, 5620, 420, 5620, 800, 5620},
		},
		{
			name:  "everything fits: untouched, cap is the largest",
			sizes: []int{100, 5000, 200}, budget: 24_000,
			wantCap: 5000, wantTotal: 5300, wantKept: []int{100, 5000, 200},
		},
		{
			name:  "exactly the budget: untouched",
			sizes: []int{12_000, 12_000}, budget: 24_000,
			wantCap: 12_000, wantTotal: 24_000, wantKept: []int{12_000, 12_000},
		},
		{
			name:  "floor binds: 30 bodies of 8000 keep 1200 each",
			sizes: slices.Repeat([]int{8000}, 30), budget: 24_000,
			wantCap: 1200, wantTotal: 36_000, wantKept: slices.Repeat([]int{1200}, 30),
		},
		{
			name:  "floor never grows a small result",
			sizes: []int{50, 90_000, 90_000}, budget: 1_000,
			wantCap: 1200, wantTotal: 2450, wantKept: []int{50, 1200, 1200},
		},
		{name: "no results", sizes: nil, budget: 24_000, wantCap: 0, wantTotal: 0, wantKept: []int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.sizes)
			limit, kept := waterFill(tt.sizes, tt.budget, 1_200)
			if limit != tt.wantCap {
				t.Errorf("cap = %d, want %d", limit, tt.wantCap)
			}
			if got := sum(kept); got != tt.wantTotal {
				t.Errorf("total = %d, want %d", got, tt.wantTotal)
			}
			if !slices.Equal(kept, tt.wantKept) {
				t.Errorf("kept = %v, want %v", kept, tt.wantKept)
			}
			if !slices.Equal(in, tt.sizes) {
				t.Errorf("waterFill modified its input: %v", tt.sizes)
			}
		})
	}
}

// TestWaterFillBeatsEqualShares reproduces the worked comparison: an
// equal share wastes 8,768 characters of the lopsided turn's budget.
func TestWaterFillBeatsEqualShares(t *testing.T) {
	sizes := []int{300, 420, 800, 8000, 8000, 8000, 8000}
	equal := 24_000 / len(sizes)
	equalTotal := 0
	for _, s := range sizes {
		equalTotal += min(s, equal)
	}
	_, kept := waterFill(sizes, 24_000, 1_200)
	if equal != 3428 || equalTotal != 15_232 {
		t.Fatalf("equal shares: %d each, %d total; want 3,428 and 15,232", equal, equalTotal)
	}
	if gain := sum(kept) - equalTotal; gain != 8_768 {
		t.Errorf("water-filling keeps %d more characters, want 8,768", gain)
	}
	if per := kept[3] - equal; per != 2_192 {
		t.Errorf("each body keeps %d more characters, want 2,192", per)
	}
}

func TestWaterFillDegenerateInputs(t *testing.T) {
	limit, kept := waterFill([]int{-5, 10, 20}, -1, -1)
	if limit != 0 || !slices.Equal(kept, []int{0, 0, 0}) {
		t.Errorf("negative budget and floor: cap %d kept %v, want 0 and zeros", limit, kept)
	}
	limit, kept = waterFill([]int{0, 0}, 0, 1200)
	if limit != 0 || !slices.Equal(kept, []int{0, 0}) {
		t.Errorf("empty results: cap %d kept %v", limit, kept)
	}
}

// checkWaterFill asserts the properties of the issue on one input.
func checkWaterFill(t *testing.T, sizes []int, budget, minKeep int) {
	t.Helper()
	limit, kept := waterFill(sizes, budget, minKeep)
	if len(kept) != len(sizes) {
		t.Fatalf("len(kept) = %d, want %d", len(kept), len(sizes))
	}
	total := 0
	for i, s := range sizes {
		s = max(s, 0)
		k := kept[i]
		total += k
		if k > s {
			t.Fatalf("result %d grew from %d to %d", i, s, k)
		}
		if k < min(s, max(minKeep, 0)) {
			t.Fatalf("result %d of %d keeps %d, below the floor %d", i, s, k, minKeep)
		}
		if s <= limit && k != s {
			t.Fatalf("result %d of %d is under the cap %d but was cut to %d", i, s, limit, k)
		}
		if k != min(s, limit) {
			t.Fatalf("result %d keeps %d, want min(%d, cap %d)", i, k, s, limit)
		}
	}
	b, m := max(budget, 0), max(minKeep, 0)
	full := 0
	for _, s := range sizes {
		full += max(s, 0)
	}
	if full <= b {
		if total != full {
			t.Fatalf("everything fits in %d but total is %d of %d", b, total, full)
		}
		return
	}
	if len(sizes)*m <= b {
		if total > b {
			t.Fatalf("total %d exceeds the budget %d (n=%d, floor %d)", total, b, len(sizes), m)
		}
		// The cap is the largest that fits.
		over := 0
		for _, s := range sizes {
			over += min(max(s, 0), limit+1)
		}
		if over <= b {
			t.Fatalf("cap %d is not the largest that fits: cap+1 totals %d ≤ %d", limit, over, b)
		}
	}
}

func TestWaterFillPropertiesRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20_000 {
		n := r.IntN(40)
		sizes := make([]int, n)
		for i := range sizes {
			switch r.IntN(3) {
			case 0:
				sizes[i] = r.IntN(1500)
			case 1:
				sizes[i] = r.IntN(10_000)
			default:
				sizes[i] = r.IntN(200_000)
			}
		}
		checkWaterFill(t, sizes, r.IntN(60_000), r.IntN(3_000))
	}
}

// FuzzWaterFill checks the properties on arbitrary sizes: every 3 bytes of
// data are one size.
func FuzzWaterFill(f *testing.F) {
	enc := func(sizes ...int) []byte {
		var b []byte
		for _, s := range sizes {
			b = append(b, byte(s>>16), byte(s>>8), byte(s))
		}
		return b
	}
	f.Add(enc(300, 420, 800, 8000, 8000, 8000, 8000), 24_000, 1_200)
	f.Add(enc(8000, 8000, 8000, 8000, 8000, 8000, 8000), 24_000, 1_200)
	f.Add(enc(1, 2, 3), 0, 0)
	f.Add(enc(100_000, 5, 100_000, 7), 1000, 300)
	f.Add([]byte{}, 24_000, 1_200)
	f.Fuzz(func(t *testing.T, data []byte, budget, minKeep int) {
		if budget > 1<<30 || minKeep > 1<<30 || budget < -1<<30 || minKeep < -1<<30 {
			t.Skip()
		}
		sizes := make([]int, 0, len(data)/3)
		for i := 0; i+3 <= len(data); i += 3 {
			sizes = append(sizes, int(binary.BigEndian.Uint32(append([]byte{0}, data[i:i+3]...))))
		}
		checkWaterFill(t, sizes, budget, minKeep)
	})
}

func BenchmarkWaterFill100k(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 7))
	sizes := make([]int, 100_000)
	for i := range sizes {
		sizes[i] = r.IntN(20_000)
	}
	b.ReportAllocs()
	for b.Loop() {
		waterFill(sizes, 24_000_000, 1_200)
	}
}
