package proxy

import (
	"crypto/sha256"
	"encoding/json"
	"hash/maphash"
	"testing"
	"time"

	"github.com/agentharness/harness"
)

// FuzzApplyClaim: any claim-log entry (a key and a value another replica,
// or anyone with the database, wrote) is applied or ignored, never a
// panic, and a decision it adds is found by its call id.
func FuzzApplyClaim(f *testing.F) {
	f.Add("d|call_1|"+string(make([]byte, 64)), `{"by":"x","res":{"call_id":"call_1","tool":"Bash"},"out":"IiI="}`)
	f.Add("d|call_1|0000000000000000000000000000000000000000000000000000000000000000", `{"by":"x","res":{"call_id":"call_1"}}`)
	f.Add("c|call_1|0000000000000000000000000000000000000000000000000000000000000000", `{"by":"x","text":"cleared","locator":"/tmp/a"}`)
	f.Add("a|1|2", `{"by":"x","at":"2026-01-02T03:04:05Z","usage":{"input":5}}`)
	f.Add("q|1|1", `{"by":"y"}`)
	f.Add("a|x|", `{}`)
	f.Add("|||", `null`)
	f.Add("m|r1|1", `{"by":"x","before":{"t":0,"r":0},"adds":[{"t":1,"s":"ab"},{"t":1,"r":1,"s":"cd"},{"t":1,"e":"answered"}]}`)
	f.Add("s|r1|1", `{"by":"x"}`)
	f.Fuzz(func(t *testing.T, key, value string) {
		cv := &conversation{decided: map[string][]*decision{}, usage: map[roundKey]harness.Usage{}, times: map[roundKey]time.Time{}, started: map[roundKey]time.Time{},
			marks: map[string]bool{}}
		var v claimValue
		if json.Unmarshal([]byte(value), &v) != nil {
			return
		}
		cv.applyClaim(key, &v, false)
		cv.applyClaim(key, &v, true)
	})
}

// FuzzAdopt: any mirror claim another replica (or anyone with the
// database) wrote is applied to a conversation's mirror against a
// request's history, or refused, never a panic; applied, the mirror has
// the shape the claim ends on.
func FuzzAdopt(f *testing.F) {
	wc := wireCases[0]
	steps := []step{{id: "call_0", tool: "Bash", args: `{}`, result: "one"}, {id: "call_1", tool: "Bash", args: `{}`, result: "two"}}
	body := wc.body("m", "read the lock files", steps)
	req, err := walkBody(body, wc.format, nil)
	if err != nil {
		f.Fatal(err)
	}
	h := buildHistory(req.Items)
	sig := func(t, r int) string {
		if r == 0 {
			return inputSig(h.Turns[t-1].Input)
		}
		return roundSig(histMarks(h).at(t-1, r))
	}
	f.Add(`{"before":{"t":0,"r":0},"adds":[{"t":1,"s":"`+sig(1, 0)+`"},{"t":1,"r":1,"s":"`+sig(1, 1)+`"},{"t":1,"r":2,"s":"`+sig(1, 2)+`"}]}`, false)
	f.Add(`{"before":{"t":1,"r":1},"adds":[{"t":1,"r":2,"s":"`+sig(1, 2)+`"},{"t":1,"e":"answered"},{"t":2}]}`, true)
	f.Add(`{"before":{"t":-1,"r":7},"adds":[{"t":0,"r":-3}]}`, false)
	f.Fuzz(func(t *testing.T, value string, seedMirror bool) {
		var v claimValue
		if json.Unmarshal([]byte(value), &v) != nil || v.Before == nil {
			return
		}
		p := &Proxy{seed: maphash.MakeSeed(), rec: newRecorder(nil, t.Logf), replicas: &replicas{}}
		cv := &conversation{decided: map[string][]*decision{}, usage: map[roundKey]harness.Usage{}, times: map[roundKey]time.Time{}, marks: map[string]bool{}}
		for _, r := range h.Results {
			d := &decision{res: &harness.ToolResult{CallID: r.CallID}, claimed: true}
			d.hash = sha256.Sum256(body[r.Content.Start:r.Content.End])
			cv.decided[r.CallID] = append(cv.decided[r.CallID], d)
		}
		if seedMirror {
			cv.mirror = []*harness.Turn{{Index: 1, Input: h.Turns[0].Input, Rounds: []*harness.Round{{Index: 1}}}}
		}
		fc := foreignClaim{mark: "s|x|1", before: *v.Before, adds: v.Adds}
		cv.foreign = []foreignClaim{fc}
		before := shapeOf(cv.mirror)
		ok := p.adopt(&call{conv: cv, hist: h, in: body})
		if ok {
			if got := shapeOf(cv.mirror); before.precedes(fc.after()) && got != fc.after() {
				t.Errorf("applied: mirror %+v, the claim ends on %+v", got, fc.after())
			}
		}
	})
}
