// Package policy holds the per-turn view policies ([harness.ViewPolicy]):
// each request's view is rebuilt from the transcript, and these shape it
// deterministically — the same transcript gives the same request, so
// prompt caches stay warm — without changing what is stored.
//
//   - [StuckPolicy]: nudges or stops a loop that repeats the same round
//     (the stop is the engine's stuck verdict: View.Stop).
//   - [TurnBudget]: one evidence budget shared by a turn's results,
//     water-filled (waterFill) before the final round, or as each
//     round's results arrive ([OnArrival], the newest round whole).
//   - [CompactPolicy]: clears old results in large chunks, so prompt caches
//     break rarely: for cost, once results older than the newest 8 rounds
//     add up to 12,000 tokens and the clear repays its cache miss
//     (ClearOld), and when the window fills, with hysteresis; a model can
//     summarise old turns. Its marks and summaries are notes it adds
//     through View.AddNote; a summary's model call is added to
//     View.Spent.
//
// Per-call guards, which decide a result's model copy when it arrives, are
// in package guard; package stack puts both in their order. Every cut a
// policy makes is visible: the view's message says how much was removed
// and how to get it back, the cut is recorded in the view's Origin, and a
// [harness.EventPolicy] event reports it.
//
// Options follow one convention: a zero field is the default, a No… field
// turns a part off (StuckPolicy.NoAlternate, CompactPolicy.NoClearOld),
// and a negative count where one once meant off is an error.
package policy
