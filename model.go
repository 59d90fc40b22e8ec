package harness

import (
	"context"
	"fmt"
	"math"
)

// Model produces the next assistant message for a request.
// Implementations live in provider/...; they must be safe for concurrent use.
type Model interface {
	Generate(ctx context.Context, req *Request) (*Response, error)
}

// StreamingModel is a Model that can also deliver text as it is generated.
// The agent uses it when Options.OnText is set.
type StreamingModel interface {
	Model
	// GenerateStream behaves like Generate and calls onText with each piece
	// of assistant text as it arrives.
	GenerateStream(ctx context.Context, req *Request, onText func(string)) (*Response, error)
}

// ModelFunc adapts a function to the Model interface.
type ModelFunc func(ctx context.Context, req *Request) (*Response, error)

// Generate calls f.
func (f ModelFunc) Generate(ctx context.Context, req *Request) (*Response, error) { return f(ctx, req) }

// Request is one call to the model: the view of the conversation and the
// tools offered. On a final request (the synthesis call) tools are withheld:
// Tools is empty, or, with Options.KeepToolsOnFinal, it keeps the schemas
// for a stable cached prefix and providers tell the model it may call none
// (tool_choice "none").
type Request struct {
	// System is the system prompt; it is also the first message of Messages
	// when set, so providers may use either.
	System   string     `json:"system,omitempty"`
	Messages []Message  `json:"messages"`
	Tools    []ToolSpec `json:"tools,omitempty"`
	// MaxOutputTokens caps the reply; 0 means the provider's default.
	MaxOutputTokens int `json:"max_output_tokens,omitempty"`
	// Final is set on the synthesis call after the round limit or a stuck
	// abort: the model must answer without calling tools.
	Final bool `json:"final,omitempty"`
	// Turn and Round locate the request in the conversation (both from 1).
	Turn  int `json:"turn"`
	Round int `json:"round"`
}

// Response is the model's answer to a Request.
type Response struct {
	Message Message `json:"message"`
	Usage   Usage   `json:"usage"`
	// StopReason is the provider's reason for stopping, as reported.
	StopReason string `json:"stop_reason,omitempty"`
	// Model is the model name the provider reports, when it does.
	Model string `json:"model,omitempty"`
}

// Usage counts tokens as the provider reported them.
//
// Input counts every prompt token, including those served from the prompt
// cache; Cached is the part of Input read from the cache; CacheWrite the
// part written to it (Anthropic reports it; others leave it zero).
type Usage struct {
	Input      int `json:"input"`
	Cached     int `json:"cached"`
	CacheWrite int `json:"cache_write,omitempty"`
	Output     int `json:"output"`
}

// Add returns the sum of u and v. Each count saturates at the largest (or
// smallest) int instead of wrapping, so a total of absurd reports stays
// absurd rather than turning negative.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		Input:      addSat(u.Input, v.Input),
		Cached:     addSat(u.Cached, v.Cached),
		CacheWrite: addSat(u.CacheWrite, v.CacheWrite),
		Output:     addSat(u.Output, v.Output),
	}
}

func addSat(a, b int) int {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt
	}
	return s
}

// MaxUsageTokens is the largest count Validate accepts in one reply: 2^40
// tokens, thousands of times any context window, and far enough below
// int64's range that summing many replies stays exact.
const MaxUsageTokens = 1 << 40

// Validate reports, wrapping ErrInvalidResponse, a usage no model can have
// produced for one reply: a negative count, a count above MaxUsageTokens,
// or cached (or cache-write) tokens above the input that includes them.
// Providers call it on every reply so that a broken server's counts are an
// error, not a bill.
func (u Usage) Validate() error {
	for _, c := range []struct {
		name string
		n    int
	}{{"input", u.Input}, {"cached", u.Cached}, {"cache-write", u.CacheWrite}, {"output", u.Output}} {
		if c.n < 0 || c.n > MaxUsageTokens {
			return fmt.Errorf("%w: %s tokens %d is outside 0..%d", ErrInvalidResponse, c.name, c.n, MaxUsageTokens)
		}
	}
	if u.Cached > u.Input {
		return fmt.Errorf("%w: cached tokens %d exceed the %d input tokens that include them", ErrInvalidResponse, u.Cached, u.Input)
	}
	if u.CacheWrite > u.Input {
		return fmt.Errorf("%w: cache-write tokens %d exceed the %d input tokens that include them", ErrInvalidResponse, u.CacheWrite, u.Input)
	}
	return nil
}

// uncached is the input billed at the full rate: Input − Cached.
func (u Usage) uncached() int { return u.Input - u.Cached }

// Effective is the cache-aware cost in tokens used throughout harness:
// uncached input + 0.1 × cached input + 4 × output (see docs/design.md, Accounting).
func (u Usage) Effective() float64 {
	return float64(u.uncached()) + 0.1*float64(u.Cached) + 4*float64(u.Output)
}
