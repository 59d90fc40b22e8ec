// Package guard holds the per-call guards ([harness.Guard]): middleware
// around a tool that decides the model's copy of its result once, when it
// arrives, and never again, so requests stay append-only.
//
//   - [ResultPolicy]: a ceiling on one result (by default 24 KiB, 8 KiB
//     for searches, listings and git, 10 KiB for a shell's other output
//     after two spills), with the full payload spilled to a file the
//     model can page (preview + locator) and, opt-in, suppression of
//     exact repeats of read-only calls. The preview strategy is a
//     [Preview]: by default [Relevant], a [ContextPreview] that also
//     sees the call and the agent's reasoning (harness.CallInfo) and
//     keeps, besides a head and a tail, the lines that match what the
//     agent is looking for ([HeadTail] keeps only the head and the tail).
//   - [Collapse]: a block of lines the model already sees in an earlier
//     result becomes one marker line naming them (used by harness run and
//     the bench's harness preset; measured in the README).
//
// The per-turn view policies, which shape a request without changing the
// transcript, are in package policy; package stack puts both in their
// order.
//
// Every cut is visible: a guard that reduces a model copy records
// a [harness.Cut] (kind, bytes in and out, a locator for the rest), writes
// a marker that fits inside the limit it enforces, and emits a
// [harness.EventPolicy] event. The stored payload is never changed.
package guard
