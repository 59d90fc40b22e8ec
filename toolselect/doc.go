// Package toolselect chooses, once per user turn, which tools are offered
// to the model, so that a large tool set does not send every schema on
// every round.
//
// A [Selector] implements [harness.Selector]. Under its Threshold (24
// tools) it offers everything: ranking costs more than it saves on a small
// connector. Over it, the tools are ranked against the turn's user input by
// a [Ranker] — by default [BM25], offline and deterministic, over each
// tool's name, description, parameter names and parameter descriptions;
// optionally an [Embedder] over an OpenAI-compatible /v1/embeddings
// endpoint — and the top TopK (20) are offered. A must-keep set always
// goes in, whatever the ranking says: identity tools (me,
// get_current_user, whoami), pinned tools, and every tool called in the
// last 12 tool messages of the conversation, so a follow-up question keeps
// the tool that answered the first one.
//
// The selection keeps the tools' original order (a stable prompt prefix)
// and the agent keeps it for every round of the turn. Across turns the
// conversation keeps its list while it serves the new turn (its must-keep
// tools, and best-ranked tools scoring at least 90% of the best overall):
// the tool schemas come first in every request, so a new list breaks the
// provider's prompt cache for the whole conversation. A turn the list does
// not serve offers every tool, from then on: the list changes at most once
// after the first turn (Selector.StickyTop, StickyShare; NoSticky selects
// afresh every turn). Defer (opt-in) offers, instead, every tool on every
// turn, the first turn's selection whole and the rest as a [Stub]: the list
// never changes, and a deferred tool is called from its short form (the
// engine returns the full schema when the arguments do not fit). When ranking fails
// or takes longer than Timeout (4 s), the turn offers every tool and an
// event says why: selection may make a turn cheaper, never make it fail.
//
// Every selection emits an event (policy "toolselect") with the count and
// the schema bytes of the tools offered and of all tools, so the saving is
// measured per request, not assumed; [Measure] computes the same figures
// for any tool list.
package toolselect
