// Package guard holds the policies that keep each request to the model
// bounded: per-call guards, which decide a tool result's model copy once,
// when it arrives, and per-turn view policies, which shape a request
// without changing the stored transcript.
//
// Per call ([harness.Guard]):
//   - [ResultPolicy]: a ceiling on one result (default 24 KiB), with the
//     full payload spilled to a file the model can page (preview + locator)
//     and, opt-in, suppression of exact repeats of read-only calls. The
//     preview strategy is a [Preview]: by default [Relevant], a
//     [ContextPreview] that also sees the call and the agent's reasoning
//     (harness.CallInfo) and keeps, besides a head and a tail, the lines
//     that match what the agent is looking for ([HeadTail] keeps only the
//     head and the tail).
//   - [Collapse]: a block of lines the model already sees in an earlier
//     result becomes one marker line naming them (used by harness run and
//     the bench's harness preset; measured in the README).
//
// Per turn ([harness.ViewPolicy]):
//   - [TurnBudget]: one evidence budget shared by a turn's results,
//     water-filled ([WaterFill]) before the final round.
//   - [StuckPolicy]: nudges or stops a loop that repeats the same round.
//   - [CompactPolicy]: clears old results in large chunks, so prompt caches
//     break rarely: for cost, once results older than the newest 8 rounds
//     add up to 12,000 tokens and the clear repays its cache miss
//     (ClearOld), and when the window fills, with hysteresis; a model can
//     summarise old turns.
//
// Every cut is visible: a guard or policy that reduces a model copy records
// a [harness.Cut] (kind, bytes in and out, a locator for the rest), writes
// a marker that fits inside the limit it enforces, and emits a
// [harness.EventPolicy] event. The stored payload is never changed.
package guard
