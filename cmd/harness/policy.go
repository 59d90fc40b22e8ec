package main

import (
	"flag"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/stackflags"
	"github.com/agentharness/harness/stack"
	"github.com/agentharness/harness/tokens"
)

// policyFlags are the context policies of "harness run" (the default
// stack's switches, shared with the Temporal worker).
type policyFlags struct{ stackflags.Flags }

func (p *policyFlags) register(fs *flag.FlagSet) { p.Register(fs) }

// config returns the stack the flags describe (stackflags.Flags.Config),
// its refusals as this command's usage errors.
func (p *policyFlags) config(modelName string, summarizer harness.Model, counter tokens.Counter, cal *tokens.Calibrator) (stack.Config, error) {
	c, err := p.Config(modelName, summarizer, counter, cal)
	return c, stackflags.AsUsage(err, errUsage)
}
