// Package recall provides the recall tool: it returns a stored tool result
// by its call id, so that a result compaction cleared from the model's view
// (policy.CompactPolicy leaves a placeholder naming the call id) can be read
// back in full. It is read-only, and like every tool it runs through the
// agent's guards, so a recalled result is still held to the ceiling.
package recall
