package catalog

// PriceModel is one way providers bill a request, in units of an uncached
// input token: what an input token read from the prompt cache costs
// (CachedRead), what an input token outside the cached prefix costs
// (CacheWrite: 1 where writing the cache is free, 1.25 where the uncached
// input is written to a 5-minute cache, so a request that breaks the
// cached prefix pays the write again) and what an output token costs
// (Output). Doc says which models bill this way.
type PriceModel struct {
	Name       string
	CachedRead float64
	CacheWrite float64
	Output     float64
	Doc        string
}

// PriceModels returns the price models requests are weighed with, the
// default first: openai (gpt-5-class: cached input 0.1), openai-4.1
// (gpt-4.1-class: cached input 0.25), anthropic (cache reads 0.1, uncached
// input written to the cache at 1.25) and nocache (no prompt caching);
// output weighs 4 in each. Each call returns a new slice.
func PriceModels() []PriceModel {
	return []PriceModel{
		{Name: "openai", CachedRead: 0.1, CacheWrite: 1, Output: 4, Doc: "gpt-5-class: cached input 0.1, output 4"},
		{Name: "openai-4.1", CachedRead: 0.25, CacheWrite: 1, Output: 4, Doc: "gpt-4.1-class: cached input 0.25, output 4"},
		{Name: "anthropic", CachedRead: 0.1, CacheWrite: 1.25, Output: 4, Doc: "cache reads 0.1, uncached input written to the 5-minute cache at 1.25, output 4"},
		{Name: "nocache", CachedRead: 1, CacheWrite: 1, Output: 4, Doc: "no prompt caching: every input token 1, output 4"},
	}
}
