package benchcore

import "testing"

// mustLookup is lookupContrast(name), failing t when there is no such preset.
func mustLookup(t *testing.T, name string) Preset {
	t.Helper()
	p, err := lookupContrast(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
