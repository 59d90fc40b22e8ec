package tokens

// Counter counts the tokens of a text. Implementations must be safe for
// concurrent use.
type Counter interface {
	Count(text string) int
}

// CounterFunc adapts a function to the Counter interface.
type CounterFunc func(text string) int

// Count calls f.
func (f CounterFunc) Count(text string) int { return f(text) }
