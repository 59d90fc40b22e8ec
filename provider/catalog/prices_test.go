package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPricesLookup(t *testing.T) {
	p := ListPrices()
	for _, tc := range []struct {
		model, entry string
		input        float64
		ok           bool
	}{
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5", 3, true},
		{"claude-opus-4-1-20250805", "claude-opus-4-1", 15, true},
		{"claude-opus-4-8", "claude-opus-", 5, true},
		{"claude-haiku-4-5-20251001", "claude-haiku-4-5", 1, true},
		{"gpt-5-mini-2025-08-07", "gpt-5-mini", 0.25, true},
		{"gpt-5.1-codex", "gpt-5.", 1.25, true},
		{"openai/gpt-5", "gpt-5", 1.25, true},
		{"models/gemini-2.5-pro", "gemini-2.5-pro", 1.25, true},
		{"GPT-4.1", "gpt-4.1", 2, true},
		{"llama-3-70b", "", 0, false},
		{"", "", 0, false},
	} {
		pr, entry, ok := p.Lookup(tc.model)
		if ok != tc.ok || entry != tc.entry || pr.Input != tc.input {
			t.Errorf("Lookup(%q) = %v, %q, %v; want input %v, %q, %v", tc.model, pr, entry, ok, tc.input, tc.entry, tc.ok)
		}
	}
	var none *Prices
	if _, _, ok := none.Lookup("gpt-5"); ok {
		t.Error("a nil table priced a model")
	}
}

func TestPriceCost(t *testing.T) {
	p := Price{Input: 3, CachedInput: 0.3, Output: 15}
	for _, tc := range []struct {
		in, cached, out int64
		want            float64
	}{
		{1_000_000, 0, 0, 3},
		{1_000_000, 1_000_000, 0, 0.3},
		{1_000_000, 500_000, 1_000_000, 1.5 + 0.15 + 15},
		{100, 200, 0, 100 * 0.3 / 1e6}, // cached never exceeds input
	} {
		if got := p.Cost(tc.in, tc.cached, tc.out); got-tc.want > 1e-12 || tc.want-got > 1e-12 {
			t.Errorf("Cost(%d, %d, %d) = %v, want %v", tc.in, tc.cached, tc.out, got, tc.want)
		}
	}
}

func TestLoadPrices(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tc := range []struct {
		name, file, body string
		model            string
		want             Price
		err              string
	}{
		{"json adds", "p.json", `{"my-model": {"input": 1, "cached_input": 0.1, "output": 4}}`, "my-model", Price{1, 0.1, 4}, ""},
		{"json overrides", "p.json", `{"gpt-5": {"input": 2, "cached_input": 0.2, "output": 8}}`, "gpt-5-2025-08-07", Price{2, 0.2, 8}, ""},
		{"json family", "p.json", `{"acme-": {"input": 7, "cached_input": 0.7, "output": 9}}`, "acme-large", Price{7, 0.7, 9}, ""},
		{"toml", "p.toml", "# mine\n[\"my-model\"]\ninput = 1\ncached_input = 0.1 # cheap\noutput = 4\n\n[other]\ninput = 2\n", "my-model", Price{1, 0.1, 4}, ""},
		{"keeps list prices", "p.toml", "[x]\ninput = 1\n", "claude-sonnet-4-5", Price{3, 0.3, 15}, ""},
		{"json unknown field", "p.json", `{"m": {"inputs": 1}}`, "", Price{}, "unknown field"},
		{"json negative", "p.json", `{"m": {"input": -1}}`, "", Price{}, "out of range"},
		{"json not an object", "p.json", `[1]`, "", Price{}, "cannot unmarshal"},
		{"toml unknown key", "p.toml", "[m]\nprice = 1\n", "", Price{}, "unknown key"},
		{"toml key outside table", "p.toml", "input = 1\n", "", Price{}, "before any [model]"},
		{"toml not a number", "p.toml", "[m]\ninput = cheap\n", "", Price{}, "want a number"},
		{"toml duplicate", "p.toml", "[m]\ninput = 1\n[m]\ninput = 2\n", "", Price{}, "given twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := LoadPrices(write(tc.file, tc.body))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, _, _ := p.Lookup(tc.model); got != tc.want {
				t.Errorf("Lookup(%q) = %v, want %v", tc.model, got, tc.want)
			}
		})
	}
	if _, err := LoadPrices(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "catalog: prices") {
		t.Errorf("missing file: err = %v", err)
	}
}

func FuzzPricesTOML(f *testing.F) {
	for _, s := range []string{"[m]\ninput = 1\ncached_input = 0.1\noutput = 4\n", "[\"a#b\"] # c\ninput=1_000", "x", "[]", "[m]\ninput = NaN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := parsePricesTOML([]byte(s))
		if err != nil {
			return
		}
		for k, p := range out {
			if k == "" || checkPrice(k, p) != nil {
				t.Fatalf("accepted %q: %v", k, p)
			}
		}
	})
}
