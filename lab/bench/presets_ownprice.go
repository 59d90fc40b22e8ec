package benchlab

import (
	"github.com/agentharness/harness/internal/benchcore"
	"github.com/agentharness/harness/internal/replayengine"
	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/provider/catalog"
)

// ownPricePresets are harness whose savings bank covers a clear for cost
// under one price model only (policy.CompactPolicy.Prices), as a proxy
// that knows its upstream's prices could: harness+ownprice/openai, /openai-4.1,
// /anthropic, /nocache. Each is read under its own price model; under
// the others it makes no promise.
func ownPricePresets() []Preset {
	var out []Preset
	for _, m := range catalog.PriceModels() {
		p := policy.CachePrice{Name: m.Name, Uncached: m.CacheWrite, Cached: m.CachedRead}
		out = append(out, Preset{Name: "harness+ownprice/" + m.Name, Ablation: true,
			Build: func(env replayengine.Env) (*replayengine.Config, error) {
				h := benchcore.DefaultHarness()
				h.Prices = []policy.CachePrice{p}
				return h.Build(env)
			},
			Doc: "harness whose savings bank covers a clear for cost under " + m.Name + "'s prices only (CompactPolicy.Prices)"})
	}
	return out
}
