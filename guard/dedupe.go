package guard

import (
	"bytes"
	"context"
	"crypto/sha256"
	"hash"
	"sync"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/canonjson"
	"github.com/agentharness/harness/internal/locator"
)

// maxDedupeConversations bounds the conversations one guard remembers; the
// least recently used is forgotten first (forgetting only means a repeat is
// shown in full).
const maxDedupeConversations = 1024

// dedupeRecord is the repeat-suppression state of one guard: per
// conversation, the newest shown result of every read-only call key.
type dedupeRecord struct {
	from int

	mu    sync.Mutex
	convs map[string]*dedupeConv
	clock uint64
}

func newDedupeRecord(from int) *dedupeRecord {
	return &dedupeRecord{from: from, convs: map[string]*dedupeConv{}}
}

// dedupeConv is the record of one conversation. epoch counts the
// non-read-only calls that cleared it.
type dedupeConv struct {
	mu      sync.Mutex
	entries map[string]*dedupeEntry
	epoch   uint64
	used    uint64
}

// dedupeEntry is the newest shown result of one call key.
type dedupeEntry struct {
	digest [sha256.Size]byte
	// count counts the identical calls since the entry was made.
	count int
	ref   dedupeRef
}

// dedupeRef locates a call whose result the model was shown.
type dedupeRef struct {
	callID      string
	turn, round int
	locator     string // its spill path, if it was spilled
}

// dedupeTicket carries one eligible call from before it runs to after.
type dedupeTicket struct {
	conv  *dedupeConv
	key   string
	epoch uint64
	self  dedupeRef
	// seen is the reference found when the call began and seenVisible
	// whether the model could still see it then (the transcript is read
	// only while the agent waits for the call).
	seen        string
	seenVisible bool
}

func (r *dedupeRecord) conv(id string) *dedupeConv {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clock++
	c := r.convs[id]
	if c == nil {
		if len(r.convs) >= maxDedupeConversations {
			var oldest string
			var at uint64
			for k, v := range r.convs {
				if at == 0 || v.used < at {
					oldest, at = k, v.used
				}
			}
			delete(r.convs, oldest)
		}
		c = &dedupeConv{entries: map[string]*dedupeEntry{}}
		r.convs[id] = c
	}
	c.used = r.clock
	return c
}

// begin is called before a call runs. A call that may modify anything
// clears its conversation's record and gets no ticket; so do exempt calls,
// Network calls and calls whose arguments are not JSON.
func (r *dedupeRecord) begin(info harness.CallInfo, call *harness.ToolCall, exempt bool) *dedupeTicket {
	c := r.conv(info.Conversation)
	risk := info.Spec.Risk
	if !risk.IsReadOnly() {
		c.clear()
		return nil
	}
	if exempt || risk.Has(harness.Network) {
		return nil
	}
	key, ok := dedupeKey(call)
	if !ok {
		return nil
	}
	t := &dedupeTicket{conv: c, key: key, self: dedupeRef{callID: call.ID, turn: info.Turn, round: info.Round}}
	c.mu.Lock()
	t.epoch = c.epoch
	var ref dedupeRef
	if e := c.entries[key]; e != nil {
		ref = e.ref
	}
	c.mu.Unlock()
	if ref.callID != "" {
		t.seen, t.seenVisible = ref.callID, refVisible(info, ref)
	}
	return t
}

// end is called after a call ran: a call that may have modified anything
// clears the record again, so nothing recorded while it ran survives it.
func (r *dedupeRecord) end(info harness.CallInfo) {
	if !info.Spec.Risk.IsReadOnly() {
		r.conv(info.Conversation).clear()
	}
}

func (c *dedupeConv) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
	c.epoch++
}

// finish decides whether a finished call repeats a visible earlier one. If
// not, the call becomes the reference for its key.
func (r *dedupeRecord) finish(t *dedupeTicket, digest [sha256.Size]byte) (dedupeRef, bool) {
	c := t.conv
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch != t.epoch {
		return dedupeRef{}, false // something was modified while it ran
	}
	e := c.entries[t.key]
	if e == nil || e.digest != digest {
		c.entries[t.key] = &dedupeEntry{digest: digest, count: 1, ref: t.self}
		return dedupeRef{}, false
	}
	e.count++
	if e.count >= r.from && t.visible(e.ref) {
		return e.ref, true
	}
	e.ref = t.self
	return dedupeRef{}, false
}

// visible reports whether the model still sees ref's result.
func (t *dedupeTicket) visible(ref dedupeRef) bool {
	switch {
	case ref.callID == t.seen:
		return t.seenVisible
	case ref.turn == t.self.turn && ref.round == t.self.round:
		return true // made during this call, by a call of the same round
	}
	return false
}

// setLocator records the spill path of a reference call's result.
func (r *dedupeRecord) setLocator(t *dedupeTicket, loc string) {
	if loc == "" {
		return
	}
	t.conv.mu.Lock()
	defer t.conv.mu.Unlock()
	if e := t.conv.entries[t.key]; e != nil && e.ref.callID == t.self.callID {
		e.ref.locator = loc
	}
}

// refVisible reports whether the model is still shown ref's result
// (harness.CallInfo.StillShown).
func refVisible(info harness.CallInfo, ref dedupeRef) bool {
	var res *harness.ToolResult
	if info.Transcript != nil {
		res = info.Transcript.FindResult(ref.callID)
	}
	return info.StillShown(ref.turn, ref.round, res)
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
	h.Write([]byte(harness.PartsText(res.FullParts())))
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
func (g *resultGuard) applyDedupe(ctx context.Context, call *harness.ToolCall, res *harness.ToolResult, ref dedupeRef, limit int) {
	if res.Bytes == 0 {
		res.Bytes = res.PayloadSize()
	}
	where := "earlier in this round"
	if info, _ := harness.CallInfoFrom(ctx); ref.turn != info.Turn || ref.round != info.Round {
		where = "turn " + fmtInt(int64(ref.turn)) + ", round " + fmtInt(int64(ref.round))
	}
	refID := markerSafe(ref.callID, 64)
	text := "[harness: this " + markerSafe(call.Name, 64) + " call repeats call " + refID + " (" + where +
		") with the same arguments and returned the same " + fmtInt(int64(res.Bytes)) +
		" bytes; nothing has been modified since, so the result is not shown again: use the result of call " + refID
	if ref.locator != "" {
		text += " (saved in full at " + markerSafe(ref.locator, 200) + ")"
	}
	text += ".]"
	if limit > 0 && len(text) > limit {
		text = validPrefix("[harness: same result as call "+refID+"; not repeated]", limit)
	}
	res.Model = []harness.Part{harness.TextPart(text)}
	loc := locator.Call(ref.callID)
	if ref.locator != "" {
		loc = ref.locator
	}
	cut := harness.Cut{Kind: harness.CutDeduped, By: ResultPolicyName, BytesIn: res.Bytes, BytesOut: len(text), Locator: loc, Of: ref.callID}
	res.Cuts = append(res.Cuts, cut)
	emitResultCut(ctx, call, res, cut, limit, describeResultCut(call, cut))
}
