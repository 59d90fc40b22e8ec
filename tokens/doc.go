// Package tokens counts tokens the way models do, so that budgets and
// compaction thresholds in harness are computed rather than estimated.
//
// It provides a [Counter] interface, an o200k_base BPE counter built on
// github.com/tiktoken-go/tokenizer (the vocabulary is compiled in, nothing
// is fetched at run time), [CountRequest] for a whole [harness.Request],
// a per-model [Calibrator] that learns the ratio between the tokens a
// provider reports and the tokens counted here (so budgets hold for models
// whose tokenizer is not o200k), and a table of context windows per model
// family ([Windows]).
package tokens
