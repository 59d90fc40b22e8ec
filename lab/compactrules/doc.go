// Package compactrules holds the lab's rules of compaction's clears
// (policy.ClearRule), each an idea the bench compares with the default:
//
//   - [ClearFrom]: clears for cost take only the results of at least a
//     size; smaller ones stay whole until the window's clear.
//   - [KeepPreviews]: clears for cost leave whole the results a ceiling
//     cut to a preview at arrival.
//   - [KeepQuoted]: a cleared result keeps, below its placeholder, the
//     lines of it the agent quoted, with lines of context.
//
// ClearFrom and KeepPreviews are named as the words transcripts recorded
// before rules had names, so a store written then reads alike.
package compactrules
