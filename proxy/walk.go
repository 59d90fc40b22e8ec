package proxy

import (
	"bytes"
	"fmt"
	"hash/maphash"
)

// A request body is one JSON object whose history is one array member
// ("messages", "input", "contents"). walkBody reads it in one pass and,
// given the previous request of the same conversation, reuses what that
// request's parse found for every history element the two bodies share
// byte for byte: an agent's requests are append-only, so the proxy's work
// per request is the new elements and the members around the history,
// whatever the history's length. Only a comparison of the shared prefix
// (a memory compare) grows with it.

// elemFormat is how a wire format reads its body: the history member's
// key, one history element, and the other members.
type elemFormat interface {
	historyKey() string
	// elem appends the items of one history element.
	elem(body []byte, e span, req *request) error
	// top reads the members other than the history.
	top(body []byte, fs []field, req *request) error
}

// reuseTail is how many history elements at the end of the previous
// request are parsed again even when unchanged: clients move cache
// markers (Anthropic's cache_control) off the last messages.
const reuseTail = 2

// reusable returns how many leading history elements of prev a body must
// share (and the byte offset it must match up to), or 0.
func (prev *request) reusable() (int, int) {
	if prev == nil || prev.histStart == 0 {
		return 0, 0
	}
	k := len(prev.Elems) - reuseTail
	if k < 1 {
		return 0, 0
	}
	return k, prev.Elems[k-1].End
}

// sharesPrefix reports whether body starts with what prev's reusable
// elements need.
func (prev *request) sharesPrefix(body []byte) bool {
	k, cut := prev.reusable()
	return k > 0 && len(body) > cut && bytes.Equal(body[:cut], prev.body[:cut])
}

// walkBody reads body with f, reusing prev when body shares its prefix.
func walkBody(body []byte, f elemFormat, prev *request) (*request, error) {
	if prev != nil && !prev.sharesPrefix(body) {
		prev = nil
	}
	i := skipWS(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, jsonErr(i, "want an object")
	}
	req := &request{body: body}
	var others []field
	env := ""
	if e, ok := f.(envelopeFormat); ok {
		env = e.envelope()
	}
	j, err := walkMembers(body, i, f, req, prev, &others, env)
	if err != nil {
		return nil, err
	}
	if t := skipWS(body, j); t != len(body) {
		return nil, jsonErr(t, "data after the JSON value")
	}
	if err := f.top(body, others, req); err != nil {
		return nil, err
	}
	return req, nil
}

// envelopeFormat is a format whose history and its fellow members sit in
// an object under one member of the body (Code Assist's "request"), read
// as if they were the body's own, beside the body's other members.
type envelopeFormat interface {
	envelope() string
}

// walkMembers reads the members of the object at i (its '{') into req and
// others, the history with walkHistory, and returns the offset after the
// object. The members of an object under the member env ("" for none) are
// read in its place, and only there is the history looked for.
func walkMembers(body []byte, i int, f elemFormat, req *request, prev *request, others *[]field, env string) (int, error) {
	j := skipWS(body, i+1)
	if j < len(body) && body[j] == '}' {
		return j + 1, nil
	}
	for {
		key, vstart, err := memberKey(body, j)
		if err != nil {
			return 0, err
		}
		var ve int
		switch {
		case env == "" && key == f.historyKey() && vstart < len(body) && body[vstart] == '[':
			ve, err = walkHistory(body, vstart, f, req, prev)
		case env != "" && key == env && vstart < len(body) && body[vstart] == '{':
			ve, err = walkMembers(body, vstart, f, req, prev, others, "")
		default:
			var vs int
			vs, ve, err = skipValue(body, vstart, 1)
			*others = append(*others, field{Key: key, Value: span{vs, ve}})
		}
		if err != nil {
			return 0, err
		}
		j = skipWS(body, ve)
		if j >= len(body) {
			return 0, jsonErr(j, "unexpected end of object")
		}
		if body[j] == '}' {
			return j + 1, nil
		}
		if body[j] != ',' {
			return 0, jsonErr(j, fmt.Sprintf("unexpected %q", body[j]))
		}
		j++
	}
}

// memberKey reads `"key":` at j and returns the key and where the value
// starts.
func memberKey(b []byte, j int) (string, int, error) {
	j = skipWS(b, j)
	if j >= len(b) || b[j] != '"' {
		return "", j, jsonErr(j, "want an object key")
	}
	kEnd, err := skipString(b, j)
	if err != nil {
		return "", j, err
	}
	key, err := unquote(b[j:kEnd])
	if err != nil {
		return "", j, jsonErr(j, "invalid key")
	}
	j = skipWS(b, kEnd)
	if j >= len(b) || b[j] != ':' {
		return "", j, jsonErr(j, "want ':'")
	}
	return key, skipWS(b, j+1), nil
}

// walkHistory reads the history array starting at b[start] == '[' and
// returns its end.
func walkHistory(b []byte, start int, f elemFormat, req *request, prev *request) (int, error) {
	req.histStart = start
	j := skipWS(b, start+1)
	if k, cut := prev.reusable(); k > 0 && prev.histStart == start {
		n := prev.elemItems[k-1]
		req.Elems = append(req.Elems, prev.Elems[:k]...)
		req.elemItems = append(req.elemItems, prev.elemItems[:k]...)
		req.Items = make([]item, n, n+8)
		copy(req.Items, prev.Items[:n])
		req.elemSums = append(make([]uint64, 0, len(prev.elemSums)+8), prev.elemSums[:min(k, len(prev.elemSums))]...)
		req.Reused = k
		j = skipWS(b, cut)
		if j >= len(b) {
			return j, jsonErr(j, "unexpected end of array")
		}
		if b[j] == ']' {
			return j + 1, nil
		}
		if b[j] != ',' {
			return j, jsonErr(j, fmt.Sprintf("unexpected %q", b[j]))
		}
		j++
	} else if j < len(b) && b[j] == ']' {
		return j + 1, nil
	}
	for {
		vs, ve, err := skipValue(b, j, 1)
		if err != nil {
			return ve, err
		}
		e := span{vs, ve}
		if err := f.elem(b, e, req); err != nil {
			return ve, err
		}
		req.Elems = append(req.Elems, e)
		req.elemItems = append(req.elemItems, len(req.Items))
		j = skipWS(b, ve)
		if j >= len(b) {
			return j, jsonErr(j, "unexpected end of array")
		}
		switch b[j] {
		case ',':
			j++
		case ']':
			return j + 1, nil
		default:
			return j, jsonErr(j, fmt.Sprintf("unexpected %q", b[j]))
		}
	}
}

// hash fills in the maphash of each history element not taken from the
// previous parse, and of each new result's content: the cache-break check
// and the decisions' lookup compare those, so a long history is hashed
// once, not on every request. It must run before the parse is shared
// (Proxy.remember).
func (req *request) hash(seed maphash.Seed) {
	for i := len(req.elemSums); i < len(req.Elems); i++ {
		e := req.Elems[i]
		req.elemSums = append(req.elemSums, maphash.Bytes(seed, req.body[e.Start:e.End]))
	}
	from := 0
	if req.Reused > 0 {
		from = req.elemItems[req.Reused-1]
	}
	for _, it := range req.Items[from:] {
		if r := it.Result; r != nil && r.Content.End > r.Content.Start {
			r.sum = maphash.Bytes(seed, req.body[r.Content.Start:r.Content.End])
		}
	}
}
