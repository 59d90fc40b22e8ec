package guard

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/agentharness/harness"
)

// canonicalJSON renders a JSON value so that two arguments objects that
// mean the same thing render the same: object keys sorted, insignificant
// whitespace dropped, string escapes normalised (no HTML escaping) and
// numbers in one spelling ("1.0", "1e0" and "1" are all "1"). Invalid JSON
// (one value, nothing after it) renders as "raw:" and the input with its
// surrounding whitespace trimmed, so a model that repeats a malformed call
// is still recognised.
func canonicalJSON(raw []byte) string {
	v, ok := decodeOne(raw)
	if !ok {
		return "raw:" + string(bytes.TrimSpace(raw))
	}
	return renderCanonical(v, canonicalNumber)
}

// decodeOne decodes raw when it holds exactly one JSON value, numbers kept
// as written.
func decodeOne(raw []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return v, true
}

// renderCanonical writes v with object keys sorted, no insignificant
// whitespace and no HTML escaping; number decides how a number is spelled.
func renderCanonical(v any, number func(string) string) string {
	var b strings.Builder
	writeCanonical(&b, v, number)
	return b.String()
}

func writeCanonical(b *strings.Builder, v any, number func(string) string) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case json.Number:
		b.WriteString(number(string(x)))
	case string:
		writeString(b, x)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e, number)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			writeCanonical(b, x[k], number)
		}
		b.WriteByte('}')
	}
}

func writeString(b *strings.Builder, s string) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b.Write(bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}))
}

// canonicalNumber gives a JSON number one spelling. Integer literals are
// kept digit for digit (they may exceed float64 precision); other numbers
// go through float64, and whole values below 1e15 are written as integers
// so "2.0" and "2" agree.
func canonicalNumber(s string) string {
	if !strings.ContainsAny(s, ".eE") {
		if s == "-0" {
			return "0"
		}
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return s
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// callFingerprint is a call's name and canonical arguments.
func callFingerprint(c harness.ToolCall) string {
	return c.Name + "(" + canonicalJSON(c.Args) + ")"
}

// roundFingerprint is the sorted fingerprints of a round's calls: the
// order in which a model lists the calls of one round carries no meaning.
func roundFingerprint(r *harness.Round) string {
	fps := make([]string, len(r.Assistant.ToolCalls))
	for i, c := range r.Assistant.ToolCalls {
		fps[i] = callFingerprint(c)
	}
	slices.Sort(fps)
	return strings.Join(fps, "\n")
}

// roundResults is a digest of a round's full results, in the order of the
// sorted call fingerprints, to tell whether two identical rounds also got
// identical answers.
func roundResults(r *harness.Round) string {
	byID := make(map[string]*harness.ToolResult, len(r.Results))
	for _, res := range r.Results {
		byID[res.CallID] = res
	}
	type pair struct{ fp, text string }
	ps := make([]pair, len(r.Assistant.ToolCalls))
	for i, c := range r.Assistant.ToolCalls {
		ps[i].fp = callFingerprint(c)
		if res := byID[c.ID]; res != nil {
			ps[i].text = strconv.FormatBool(res.IsError) + ":" + res.FullText()
		}
	}
	slices.SortStableFunc(ps, func(a, b pair) int { return strings.Compare(a.fp, b.fp) })
	h := sha256.New()
	for _, p := range ps {
		h.Write([]byte(p.text))
		h.Write([]byte{0})
	}
	return string(h.Sum(nil))
}
