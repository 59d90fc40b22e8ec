package benchcore

import "testing"

// mustLookup is Lookup(name), failing t when there is no such preset.
func mustLookup(t *testing.T, name string) Preset {
	t.Helper()
	p, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
