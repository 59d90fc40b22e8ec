package benchlab

import (
	"context"
	"testing"

	"github.com/agentharness/harness/internal/replayengine"
)

// TestRereadBankPresets: a 30 KB file read with the needle a quarter in is
// spilled and read back under every preset; harness prices the round
// beside the replay, harness+rereadsent and harness+rereadbank send it (one
// more request, whose calls the policies see).
func TestRereadBankPresets(t *testing.T) {
	read := paysRecording("Read", [2]string{"src/a.go", linesAt(460, 100)})
	for _, c := range []struct {
		preset string
		sent   bool
	}{
		{"harness", false}, {"harness+rereadsent", true}, {"harness+rereadbank", true},
	} {
		t.Run(c.preset, func(t *testing.T) {
			p, err := Lookup(c.preset)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := replayengine.Replay(context.Background(), read, p.Policy(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Recoveries) != 1 || rep.Recoveries[0].Sent != c.sent {
				t.Fatalf("recovery rounds %+v, want one, sent %v", rep.Recoveries, c.sent)
			}
			extra := 0
			if c.sent {
				extra = 1
			}
			if len(rep.Calls) != read.Calls()+extra {
				t.Errorf("%d requests of %d recorded calls, sent %v", len(rep.Calls), read.Calls(), c.sent)
			}
		})
	}
}
