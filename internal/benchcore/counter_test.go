package benchcore

import (
	"testing"

	"github.com/agentharness/harness/tokens"
)

func counter(t testing.TB) tokens.Counter {
	t.Helper()
	bpe, err := tokens.O200k()
	if err != nil {
		t.Fatal(err)
	}
	return tokens.NewCache(bpe, nil)
}
