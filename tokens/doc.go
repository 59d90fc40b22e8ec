// Package tokens counts tokens the way models do, so that budgets and
// compaction thresholds in harness are computed rather than estimated.
//
// It provides a [Counter] interface; an o200k_base BPE counter ([O200k])
// over the vocabulary of github.com/tiktoken-go/tokenizer, compiled in
// (nothing is fetched at run time), which splits text by hand as the
// encoding's pattern does and merges without allocating, built once per
// process and safe for concurrent use; a [Cache] that remembers the
// counts of long texts, since a view is recounted every round;
// [CountRequest] for a whole
// [harness.Request] (messages, tool calls, images and tool schemas, with
// documented per-message overheads); a per-model [Calibrator], fed by the
// [Calibrate] model wrapper, that learns the ratio between the input
// tokens a provider reports and the tokens counted here, so budgets hold
// for models whose tokenizer is not o200k. Context windows per model
// family are provider facts, in package provider/catalog.
package tokens
