package benchlab

import (
	"testing"

	"github.com/agentharness/harness/tokens"
)

// counter is the o200k counter the research tests price with, cached.
func counter(t testing.TB) tokens.Counter {
	t.Helper()
	bpe, err := tokens.O200k()
	if err != nil {
		t.Fatal(err)
	}
	return tokens.NewCache(bpe, nil)
}
