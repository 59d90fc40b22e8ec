package harness

import "errors"

// ErrContextTooLarge is wrapped by providers when the model rejects a
// request because it does not fit the context window. The agent then
// rebuilds the view with View.Overflow set (so compaction policies compact
// to their target) and retries once.
var ErrContextTooLarge = errors.New("request too large for the model's context window")

// ErrInvalidResponse is wrapped by providers when a reply arrived (HTTP
// 200) but is not a sane answer: not a message at all, or usage no model
// can report (see Usage.Validate). The round fails with that error rather
// than being recorded as an empty answer or a nonsense bill.
var ErrInvalidResponse = errors.New("the model's reply is not a valid answer")
