package benchcore

import (
	"fmt"
	"strings"

	"github.com/agentharness/harness/provider/catalog"
	"github.com/agentharness/harness/replay"
)

// Pricing is one provider's price model in units of an uncached input
// token: what a cached input token (CachedRead), an input token written
// to the prompt cache (CacheWrite: the uncached part of every request)
// and an output token (Output) cost.
type Pricing struct {
	Name string `json:"name"`
	// CachedRead weighs the tokens of a request's cached prefix.
	CachedRead float64 `json:"cached_read"`
	// CacheWrite weighs the uncached tokens: 1 where writing the cache is
	// free (OpenAI), 1.25 for Anthropic's 5-minute cache, where a policy
	// that breaks the prefix pays the write again.
	CacheWrite float64 `json:"cache_write"`
	// Output weighs the output tokens.
	Output float64 `json:"output"`
	Doc    string  `json:"-"`
}

// Pricings returns the named price models, the default first: catalog's
// PriceModels, with the JSON names the bench's tables use.
func Pricings() []Pricing {
	var out []Pricing
	for _, m := range catalog.PriceModels() {
		out = append(out, Pricing{Name: m.Name, CachedRead: m.CachedRead, CacheWrite: m.CacheWrite, Output: m.Output, Doc: m.Doc})
	}
	return out
}

// defaultPricings are the price models the text tables show side by side.
var defaultPricings = []string{"openai", "anthropic"}

// lookupPricing returns the named price model.
func lookupPricing(name string) (Pricing, error) {
	var names []string
	for _, p := range Pricings() {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Pricing{}, fmt.Errorf("bench: unknown pricing %q (have %s)", name, strings.Join(names, ", "))
}

// ParsePricings checks a comma-separated list of price model names; an
// empty list gives defaultPricings.
func ParsePricings(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return defaultPricings, nil
	}
	var out []string
	for _, n := range strings.Split(list, ",") {
		p, err := lookupPricing(strings.TrimSpace(n))
		if err != nil {
			return nil, err
		}
		out = append(out, p.Name)
	}
	return out, nil
}

// Cost is what one call costs under p.
func (p Pricing) Cost(c replay.CallStat) float64 {
	return p.CacheWrite*float64(c.Input-c.Cached) + p.CachedRead*float64(c.Cached) + p.Output*float64(c.Output)
}

// CacheBreaks counts the requests of one recording (calls in order)
// whose cached prefix is shorter than the previous request's cached
// prefix: the request changed something a provider had already cached,
// so everything after it is read uncached (and, under Anthropic pricing,
// written again). The first request never breaks.
func CacheBreaks(calls []replay.CallStat) int {
	n := 0
	for i := 1; i < len(calls); i++ {
		if calls[i].Cached < calls[i-1].Cached {
			n++
		}
	}
	return n
}
