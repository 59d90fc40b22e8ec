package benchlab

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/replayengine"
)

// TestOwnPricePresets: a long turn of 6 KB file prints none of which is
// used again. The savings bank as harness builds it must cover a clear
// under every price model, Anthropic's cache write the dearest, so it
// clears later than a bank that answers to the no-cache price alone:
// harness+ownprice/nocache sends fewer input tokens. harness+ownprice/anthropic is harness,
// whose binding price it is.
func TestOwnPricePresets(t *testing.T) {
	var calls [][2]string
	for i := range 80 {
		calls = append(calls, [2]string{fmt.Sprintf("cat notes%02d.txt", i), strings.Repeat(fmt.Sprintf("note %02d: a line of a file nobody reads again\n", i), 130)})
	}
	rec := paysRecording("bash", calls...)
	input := map[string]int{}
	for _, name := range []string{"harness", "harness+ownprice/anthropic", "harness+ownprice/nocache"} {
		p, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := replayengine.Replay(context.Background(), rec, p.Policy(), nil)
		if err != nil {
			t.Fatal(err)
		}
		input[name] = rep.Usage.Input
	}
	if input["harness+ownprice/anthropic"] != input["harness"] {
		t.Errorf("harness+ownprice/anthropic sent %d input tokens, harness %d: want the same", input["harness+ownprice/anthropic"], input["harness"])
	}
	if input["harness+ownprice/nocache"] >= input["harness"] {
		t.Errorf("harness+ownprice/nocache sent %d input tokens, harness %d: want fewer", input["harness+ownprice/nocache"], input["harness"])
	}
	t.Logf("input tokens: %v", input)
}
