package benchcore

import (
	"context"
	"testing"
)

// BenchmarkSuite measures "harness bench" with no folder: generating the
// built-in suite and replaying it under every preset.
func BenchmarkSuite(b *testing.B) {
	for b.Loop() {
		recs, err := Suite()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Run(context.Background(), recs, nil); err != nil {
			b.Fatal(err)
		}
	}
}
