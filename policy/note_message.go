package policy

import "github.com/agentharness/harness"

// noteMessage makes text the note message of v: the user message that
// stands for the conversation's notes, right after the system prompt
// (where harness.BuildView puts a summary or the clearing notice). It
// replaces the message there when one is present and inserts one
// otherwise, and returns its index and whether it was inserted.
func noteMessage(v *harness.View, text string) (i int, inserted bool) {
	if len(v.Messages) > 0 && v.Messages[0].Role == harness.RoleSystem && v.Origins[0].Turn == 0 {
		i = 1
	}
	msg := harness.Message{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart(text)}}
	if i < len(v.Messages) && v.Origins[i].Turn == 0 && v.Messages[i].Role == harness.RoleUser {
		v.Messages[i] = msg
		return i, false
	}
	_ = v.Insert(i, msg, harness.Origin{})
	return i, true
}
