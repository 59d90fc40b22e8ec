package benchlab

import (
	"github.com/agentharness/harness/internal/benchcore"
	"github.com/agentharness/harness/internal/replayengine"
)

// rereadBankPresets are harness with the recovery rounds the bench
// charges sent through the replay as a live agent makes them
// (replayengine.Config.SendRecoveries), so the policies see the re-reads:
// harness+rereadsent with the savings bank as it is, harness+rereadbank
// with the bank charged with them (policy.CompactPolicy.ChargeRereads: a
// clear for cost waits until the cuts have saved what reading their
// results back cost).
func rereadBankPresets() []Preset {
	sent := func(charge bool) func(env replayengine.Env) (*replayengine.Config, error) {
		return func(env replayengine.Env) (*replayengine.Config, error) {
			h := benchcore.DefaultHarness()
			h.ChargeRereads = charge
			cfg, err := h.Build(env)
			if err != nil {
				return nil, err
			}
			cfg.SendRecoveries = true
			return cfg, nil
		}
	}
	return []Preset{
		{Name: "harness+rereadsent", Ablation: true, Build: sent(false),
			Doc: "harness whose recovery rounds are sent through the replay (requests whose pages join the conversation the policies see) instead of priced beside it"},
		{Name: "harness+rereadbank", Ablation: true, Build: sent(true),
			Doc: "harness+rereadsent whose savings bank charges each re-read of a spill file or stored result (CompactPolicy.ChargeRereads)"},
	}
}
