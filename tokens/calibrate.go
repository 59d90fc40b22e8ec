package tokens

import (
	"math"
	"sync"
)

// Calibration bounds: a factor outside them means the counts are not of
// the same thing (a missing system prompt, a provider that reports cached
// tokens apart), not a different tokenizer, so it is clamped.
const (
	minFactor = 0.5
	maxFactor = 2.0
)

// Calibrator learns, per model, the factor between the input tokens a
// provider reports and the tokens counted here (reported ÷ counted),
// smoothed as an exponential moving average and clamped to
// [minFactor, maxFactor]. Budgets multiply counted tokens by the factor so
// they hold for models whose tokenizer is not o200k (Claude, Gemini,
// Llama). It is safe for concurrent use.
type Calibrator struct {
	alpha      float64
	minCounted int

	mu      sync.Mutex
	factors map[string]calibration
}

type calibration struct {
	factor float64
	n      int
}

// NewCalibrator returns a calibrator that weighs each new observation 0.3
// in its moving average (the first observation of a model sets its factor
// outright) and ignores requests that counted fewer than 64 tokens, where
// fixed framing dominates the ratio.
func NewCalibrator() *Calibrator { return newCalibrator(0.3, 64) }

// newCalibrator returns a calibrator with alpha, the weight of a new
// observation, and minCounted, the fewest counted tokens an observation
// needs.
func newCalibrator(alpha float64, minCounted int) *Calibrator {
	return &Calibrator{alpha: alpha, minCounted: minCounted, factors: map[string]calibration{}}
}

// observe records one request of model that counted counted tokens here
// and was reported as reported input tokens by the provider, and returns
// the updated factor. Observations with counted below the minimum or
// reported ≤ 0 (a provider that reports nothing) leave the factor as it is.
func (c *Calibrator) observe(model string, counted, reported int) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	cal, ok := c.factors[model]
	if counted < c.minCounted || reported <= 0 {
		if !ok {
			return 1
		}
		return cal.factor
	}
	ratio := clamp(float64(reported) / float64(counted))
	if !ok {
		cal.factor = ratio
	} else {
		cal.factor = clamp(cal.factor + c.alpha*(ratio-cal.factor))
	}
	cal.n++
	c.factors[model] = cal
	return cal.factor
}

// Factor returns the learned factor of model, or 1 before any
// observation.
func (c *Calibrator) Factor(model string) float64 {
	if c == nil {
		return 1
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cal, ok := c.factors[model]; ok {
		return cal.factor
	}
	return 1
}

// observations returns how many observations shaped model's factor.
func (c *Calibrator) observations(model string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.factors[model].n
}

// scale converts a count made here into the model's tokens: counted ×
// factor, rounded up so a budget errs on the safe side.
func (c *Calibrator) scale(model string, counted int) int {
	return int(math.Ceil(float64(counted) * c.Factor(model)))
}

// Set fixes the factor of model (clamped), for example one persisted from
// an earlier run; later observations keep adjusting it.
func (c *Calibrator) Set(model string, factor float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cal := c.factors[model]
	cal.factor = clamp(factor)
	c.factors[model] = cal
}

func clamp(f float64) float64 {
	if math.IsNaN(f) {
		return 1
	}
	return min(max(f, minFactor), maxFactor)
}
