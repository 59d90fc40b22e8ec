package replay

import (
	"encoding/json"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/shellcmd"
)

// shellRisk classifies one call of a shell tool (a "command" argument) the
// way a harness tool would declare it: ReadOnly when shellcmd.ReadOnly
// finds that every command of the pipeline or list only reads,
// Destructive otherwise. Recorded shell agents run everything through one
// tool, and read-only is what lets dedupe and parallelism act.
func shellRisk(args json.RawMessage) harness.Risk {
	if shellcmd.ReadOnly(args) {
		return harness.ReadOnly
	}
	return harness.Destructive
}

// specFor returns the spec of tool name offered in rec, with the risk of
// this call: shell tools (named bash or shell, taking a command) are
// classified per call by shellRisk.
func specFor(rec *Recording, call harness.ToolCall) harness.ToolSpec {
	spec := harness.ToolSpec{Name: call.Name}
	for _, t := range rec.Tools {
		if t.Name == call.Name {
			spec = t
			break
		}
	}
	if spec.Risk == 0 && (call.Name == "bash" || call.Name == "shell") {
		spec.Risk = shellRisk(call.Args)
	}
	return spec
}
