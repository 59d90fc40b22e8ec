package catalog_test

import (
	"fmt"

	"github.com/agentharness/harness/provider/catalog"
)

func ExampleWindows_Lookup() {
	w := catalog.DefaultWindows()
	w["my-finetune"] = 32768
	for _, m := range []string{"gpt-4o-mini", "claude-3-5-sonnet-20241022", "my-finetune-v2", "unknown"} {
		n, ok := w.Lookup(m)
		fmt.Println(m, n, ok)
	}
	// Output:
	// gpt-4o-mini 128000 true
	// claude-3-5-sonnet-20241022 200000 true
	// my-finetune-v2 32768 true
	// unknown 0 false
}
