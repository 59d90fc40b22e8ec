package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/agentharness/harness"
)

// printWarning writes a warning event on w as one line: a provider's
// retry as it says it ("retrying (2/5) in 1s: openai: …"), anything else
// that degraded as "warning: …". Other events print nothing; --events
// prints them all as JSON.
func printWarning(w io.Writer, ev harness.Event) {
	if ev.Kind != harness.EventWarning || ev.Detail == "" {
		return
	}
	if strings.HasPrefix(ev.Detail, "retrying (") {
		fmt.Fprintln(w, ev.Detail)
		return
	}
	fmt.Fprintf(w, "warning: %s\n", ev.Detail)
}
