package harness

// notesHide reports whether a note of c keeps the results of round (turn,
// round) out of every view: a summary standing in for the turn (Note.After
// at or after it) or a clearing mark at or after the round.
func (c *Conversation) notesHide(turn, round int) bool {
	for _, n := range c.Notes {
		if n == nil {
			continue
		}
		if n.After >= turn || (n.ClearTurn > 0 && (n.ClearTurn > turn || (n.ClearTurn == turn && n.ClearRound >= round))) {
			return true
		}
	}
	return false
}

// StillShown reports whether the model was shown res, the stored result of
// a call made in round (turn, round), whole in the request it answered
// with the call info describes: a result of the same round is in flight
// beside the call and counts as shown; otherwise the transcript holds it
// uncut by a view policy's trim or clear and not timed out, no note hides
// its round, and the request's view (when known) showed it uncut. Guards
// that point the model at an earlier result instead of repeating it
// (Collapse, repeat suppression) point only at results this holds for.
func (info CallInfo) StillShown(turn, round int, res *ToolResult) bool {
	if turn == info.Turn && round == info.Round {
		return true
	}
	if info.Transcript == nil || res == nil || res.TimedOut || info.Transcript.notesHide(turn, round) {
		return false
	}
	for _, c := range res.Cuts {
		if c.Kind == CutTrimmed || c.Kind == CutCleared {
			return false
		}
	}
	// A per-turn policy may have trimmed it in the request the model just
	// answered; that cut lives in the view, not the transcript.
	return info.View == nil || info.View.showsWhole(res.CallID)
}
