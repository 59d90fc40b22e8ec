package codec

import (
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// CheckSavable refuses a conversation that cannot be saved: one without an
// id, or loaded without its full payloads (see store.Partial), whose model
// copies would be stored as if they were what the tools returned.
func CheckSavable(conv *harness.Conversation) error {
	if conv == nil || conv.ID == "" {
		return fmt.Errorf("Save needs a conversation with an id")
	}
	for i, t := range conv.Turns {
		if t.Index != i+1 {
			return fmt.Errorf("conversation %s: turn %d has index %d", conv.ID, i+1, t.Index)
		}
		for _, r := range t.Rounds {
			for _, res := range r.Results {
				if store.Partial(res) {
					return fmt.Errorf("result %s of turn %d was loaded without its full payload; save a conversation from LoadFull", res.CallID, t.Index)
				}
			}
		}
	}
	return nil
}
