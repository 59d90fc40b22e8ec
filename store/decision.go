package store

import "time"

// Decision is what a proxy decided to send in place of one tool result
// from some request on, recorded so that a restarted proxy sends the same
// bytes: the stored transcript keeps every result as the client sent it,
// so the model copy the proxy sent instead has to be kept beside it.
type Decision struct {
	// Turn and Round locate the request the decision was made at.
	Turn  int `json:"turn"`
	Round int `json:"round"`
	// CallID and Tool name the result; ContentSHA256 is the hex SHA-256
	// the proxy gave the result's content as the client sent it, which
	// tells apart two results a client sent under one call id.
	CallID        string `json:"call_id"`
	Tool          string `json:"tool"`
	ContentSHA256 string `json:"content_sha256"`
	// By names who decided (the proxy's idle clear: "proxy-clear-idle").
	By string `json:"by"`
	// Text is the model copy sent in place of the result, and Locator the
	// file that holds the whole result ("" when none does).
	Text    string `json:"text"`
	Locator string `json:"locator,omitempty"`
	// BytesIn and BytesOut are the sizes of what the model was shown of
	// the result before the decision and after it.
	BytesIn  int `json:"bytes_in"`
	BytesOut int `json:"bytes_out"`
	// Time is when the decision was made (zero when not known).
	Time time.Time `json:"time,omitzero"`
}
