package guard

import "github.com/agentharness/harness/policy"

// The per-turn view policies moved to package policy. These names keep
// code written against guard compiling.

// TurnBudget is policy.TurnBudget.
//
// Deprecated: use policy.TurnBudget.
type TurnBudget = policy.TurnBudget

// StuckPolicy is policy.StuckPolicy.
//
// Deprecated: use policy.StuckPolicy.
type StuckPolicy = policy.StuckPolicy

// CompactPolicy is policy.CompactPolicy.
//
// Deprecated: use policy.CompactPolicy.
type CompactPolicy = policy.CompactPolicy

// When is policy.When.
//
// Deprecated: use policy.When.
type When = policy.When

// The moved constants.
//
// Deprecated: use the names in package policy.
const (
	FinalRound             = policy.FinalRound
	EveryRound             = policy.EveryRound
	DefaultTurnChars       = policy.DefaultTurnChars
	DefaultCompactClearOld = policy.DefaultCompactClearOld
)

// WaterFill is policy.WaterFill.
//
// Deprecated: use policy.WaterFill.
func WaterFill(sizes []int, budget, minKeep int) (limit int, kept []int) {
	return policy.WaterFill(sizes, budget, minKeep)
}
