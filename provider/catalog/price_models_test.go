package catalog

import "testing"

// TestPriceModels checks the facts every price model must satisfy: named
// once, the default (openai) first, a cached read never dearer than an
// uncached input, a cache write at least as dear, output dearer than input.
func TestPriceModels(t *testing.T) {
	ms := PriceModels()
	if len(ms) == 0 || ms[0].Name != "openai" {
		t.Fatalf("PriceModels() = %+v: want openai first", ms)
	}
	seen := map[string]bool{}
	for _, m := range ms {
		switch {
		case m.Name == "" || seen[m.Name]:
			t.Errorf("%+v: empty or repeated name", m)
		case m.CachedRead <= 0 || m.CachedRead > 1:
			t.Errorf("%s: cached read %v outside (0, 1]", m.Name, m.CachedRead)
		case m.CacheWrite < 1:
			t.Errorf("%s: cache write %v below an uncached input token", m.Name, m.CacheWrite)
		case m.Output <= 1:
			t.Errorf("%s: output %v not dearer than input", m.Name, m.Output)
		case m.Doc == "":
			t.Errorf("%s: no Doc", m.Name)
		}
		seen[m.Name] = true
	}
	ms[0].Name = "changed"
	if PriceModels()[0].Name != "openai" {
		t.Error("PriceModels returned a shared slice")
	}
}
