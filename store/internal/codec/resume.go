package codec

import (
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// CheckResumable checks that turn may be resumed (store.TurnResumer), given
// the conversation's last stored turn: its index, input and outcome. The
// turn must be that one, and either unended or ended by a takeover
// (store.Interrupted); the error wraps store.ErrTurnEnded otherwise.
func CheckResumable(convID string, turn *harness.Turn, lastIndex int, lastInput string, lastOutcome harness.Outcome) error {
	switch {
	case turn.Index < lastIndex:
		return fmt.Errorf("conversation %s: turn %d cannot be resumed, turn %d has begun since: %w", convID, turn.Index, lastIndex, store.ErrTurnEnded)
	case turn.Index > lastIndex:
		return fmt.Errorf("conversation %s has %d stored turn(s), so there is no turn %d to resume: %w", convID, lastIndex, turn.Index, store.ErrNotFound)
	case turn.Input != lastInput:
		return fmt.Errorf("conversation %s: the stored turn %d has another input than the turn to resume: load the conversation from the store to continue it", convID, lastIndex)
	case lastOutcome != "" && lastOutcome != store.Interrupted:
		return fmt.Errorf("conversation %s: turn %d ended (%s) and cannot be resumed: %w", convID, lastIndex, lastOutcome, store.ErrTurnEnded)
	}
	return nil
}
