package bench_test

import (
	"context"
	"fmt"

	"github.com/agentharness/harness/bench"
)

// Example replays recordings (here the built-in scenarios; replay.Load reads
// your own agent's history) under harness's defaults and compares what
// they cost with keeping every result whole.
func Example() {
	recs, err := bench.Suite()
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := bench.Lookup("harness")
	if err != nil {
		fmt.Println(err)
		return
	}
	tab, err := bench.Run(context.Background(), recs, &bench.Options{Presets: []bench.Preset{h}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, row := range tab.Rows {
		fmt.Printf("%s costs less than keeping everything: %v\n", row.Preset, row.Ratios["openai"] < 1)
	}
	// Output:
	// none costs less than keeping everything: false
	// harness costs less than keeping everything: true
}
