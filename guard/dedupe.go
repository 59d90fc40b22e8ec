package guard

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"maps"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/canonjson"
	"github.com/agentharness/harness/internal/locator"
)

// metaDedupe is the ToolResult.Meta key under which a ResultPolicy with
// Dedupe on records what later calls need to know of a result: "write"
// for a call that may have modified something, "read" for a read-only call
// that cannot be a reference (Network, exempt, arguments that are not
// JSON, cancelled), and "sha256:<hex>" — the digest of the full payload —
// for a read-only call a later repeat may point at. The transcript keeps
// it, so repeat suppression needs no state of its own and survives a
// conversation reloaded from the store.
const metaDedupe = "dedupe"

// Values of metaDedupe other than a digest.
const (
	dedupeWrite = "write"
	dedupeRead  = "read"
)

// dedupeCall is one call Dedupe may suppress: its key and where it stands.
type dedupeCall struct {
	key  string
	info harness.CallInfo
	call *harness.ToolCall
}

// newDedupeCall stamps what the transcript must know of a call that did not
// qualify (res may be nil: nothing to stamp) and returns the call when it
// qualifies: read-only, not Network, not exempt, arguments that are JSON.
func newDedupeCall(info harness.CallInfo, call *harness.ToolCall, res *harness.ToolResult, exempt bool) *dedupeCall {
	risk := info.Spec.Risk
	switch {
	case !risk.IsReadOnly():
		stampDedupe(res, dedupeWrite)
		return nil
	case exempt || risk.Has(harness.Network):
		stampDedupe(res, dedupeRead)
		return nil
	}
	key, ok := dedupeKey(call)
	if !ok {
		stampDedupe(res, dedupeRead)
		return nil
	}
	return &dedupeCall{key: key, info: info, call: call}
}

// stampDedupe records v under metaDedupe. Meta is copied first: a tool may
// hand out one map for many results.
func stampDedupe(res *harness.ToolResult, v string) {
	if res == nil {
		return
	}
	m := maps.Clone(res.Meta)
	if m == nil {
		m = map[string]any{}
	}
	m[metaDedupe] = v
	res.Meta = m
}

func digestStamp(d [sha256.Size]byte) string { return "sha256:" + hex.EncodeToString(d[:]) }

// repeatOf decides, from the results made before the call (the transcript
// and the call's own round), whether its result repeats one the model
// still sees, and returns that one. Walking back from the newest: a result
// not stamped read-only ends the search (something may have been modified
// since; results of other guards' configurations and of calls that failed
// before the guard saw them count as such, which can only show more); the
// same key with another payload ends it too; each identical result counts
// towards From, and the newest identical one not itself suppressed is the
// reference. It is returned only when the count reaches from and the model
// still sees it whole.
func (d *dedupeCall) repeatOf(ctx context.Context, stamp string, from int) (earlier, bool) {
	before := resultsBefore(ctx, d.info, d.call, d.repeatedInRound())
	count := 1
	var ref earlier
	for i := len(before) - 1; i >= 0; i-- {
		e := before[i]
		s, _ := e.res.Meta[metaDedupe].(string)
		if s == "" || s == dedupeWrite {
			break
		}
		if s == dedupeRead || e.call == nil {
			continue
		}
		if k, ok := dedupeKey(e.call); !ok || k != d.key {
			continue
		}
		if s != stamp {
			break
		}
		count++
		if ref.res == nil && !suppressed(e.res) {
			ref = e
		}
	}
	if ref.res == nil || count < from || !ref.shown(d.info) {
		return earlier{}, false
	}
	return ref, true
}

// repeatedInRound reports whether a call made before this one in its round
// has the same key: only then are the round's results waited for.
func (d *dedupeCall) repeatedInRound() bool {
	if d.info.Message == nil {
		return false
	}
	for i := range d.info.Message.ToolCalls {
		c := &d.info.Message.ToolCalls[i]
		if c.ID == d.call.ID {
			return false
		}
		if k, ok := dedupeKey(c); ok && k == d.key {
			return true
		}
	}
	return false
}

// suppressed reports whether Dedupe replaced res's model copy by a pointer.
func suppressed(res *harness.ToolResult) bool {
	for _, c := range res.Cuts {
		if c.Kind == harness.CutDeduped && c.By == ResultPolicyName {
			return true
		}
	}
	return false
}

// dedupeKey is the tool name and the arguments as canonical JSON: object
// keys sorted, whitespace dropped, equal numbers spelled alike.
func dedupeKey(call *harness.ToolCall) (string, bool) {
	args, ok := canonicalArgs(call.Args)
	if !ok {
		return "", false
	}
	return call.Name + "\x00" + args, true
}

// canonicalArgs is the canonical form of one JSON value (package
// canonjson: "1.0" and "1" are one number, as for any JSON reader); empty
// input counts as an empty object.
func canonicalArgs(raw []byte) (string, bool) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "{}", true
	}
	return canonjson.String(raw)
}

// payloadDigest identifies a result's full payload: its text as the model
// would read it, its images, and whether it is an error.
func payloadDigest(res *harness.ToolResult) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte(res.FullText()))
	return finishDigest(h, res)
}

// finishDigest adds what the text leaves out to a digest of the text.
func finishDigest(h hash.Hash, res *harness.ToolResult) [sha256.Size]byte {
	for _, p := range res.FullParts() {
		if p.Type == harness.PartImage {
			h.Write([]byte{0})
			h.Write([]byte(p.MIMEType))
			h.Write(p.Data)
		}
	}
	if res.IsError {
		h.Write([]byte{1})
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// applyDedupe replaces the model copy of a repeat with a pointer to the
// earlier call.
func (g *resultGuard) applyDedupe(ctx context.Context, call *harness.ToolCall, res *harness.ToolResult, ref earlier, limit int) {
	if res.Bytes == 0 {
		res.Bytes = res.PayloadSize()
	}
	info, _ := harness.CallInfoFrom(ctx)
	where := "earlier in this round"
	if ref.turn != info.Turn || ref.round != info.Round {
		where = "turn " + fmtInt(int64(ref.turn)) + ", round " + fmtInt(int64(ref.round))
	}
	refID := markerSafe(ref.res.CallID, 64)
	spilled := lastSpillLocator(ref.res)
	text := "[harness: this " + markerSafe(call.Name, 64) + " call repeats call " + refID + " (" + where +
		") with the same arguments and returned the same " + fmtInt(int64(res.Bytes)) +
		" bytes; nothing has been modified since, so the result is not shown again: use the result of call " + refID
	if spilled != "" {
		text += " (saved in full at " + markerSafe(spilled, 200) + ")"
	}
	text += ".]"
	if limit > 0 && len(text) > limit {
		text = validPrefix("[harness: same result as call "+refID+"; not repeated]", limit)
	}
	res.Model = []harness.Part{harness.TextPart(text)}
	loc := locator.Call(ref.res.CallID)
	if spilled != "" {
		loc = spilled
	}
	cut := harness.Cut{Kind: harness.CutDeduped, By: ResultPolicyName, BytesIn: res.Bytes, BytesOut: len(text), Locator: loc, Of: ref.res.CallID}
	res.Cuts = append(res.Cuts, cut)
	emitResultCut(ctx, call, res, cut, limit, describeResultCut(call, cut))
}
