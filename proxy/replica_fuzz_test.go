package proxy

import (
	"encoding/json"
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
	f.Fuzz(func(t *testing.T, key, value string) {
		cv := &conversation{decided: map[string][]*decision{}, usage: map[roundKey]harness.Usage{}, times: map[roundKey]time.Time{}, started: map[roundKey]bool{}}
		var v claimValue
		if json.Unmarshal([]byte(value), &v) != nil {
			return
		}
		cv.applyClaim(key, &v, false)
		cv.applyClaim(key, &v, true)
	})
}
