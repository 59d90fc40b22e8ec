package harness

import "errors"

// ErrContextTooLarge is wrapped by providers when the model rejects a
// request because it does not fit the context window. The agent then
// rebuilds the view with View.Overflow set (so compaction policies compact
// to their target) and retries once.
var ErrContextTooLarge = errors.New("request too large for the model's context window")
