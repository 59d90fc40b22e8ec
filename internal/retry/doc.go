// Package retry runs a provider call again after a transient failure: a
// 429, a 5xx, a dropped connection or a stream cut short. It waits with
// exponential backoff and jitter, or as long as the server's Retry-After
// header says, and gives up at once on anything else (other 4xx, a
// cancelled context).
//
// Both provider packages use it instead of the SDKs' own retry loops, which
// are switched off: one policy for both wire formats, a delay a test can
// shrink to microseconds, no retry of 408/409, a Retry-After given as an
// HTTP-date, and streams that are retried only while nothing has been shown.
// The proxy's recorder uses the same loop for a store write refused because
// another writer holds the conversation.
package retry
