// Package canonjson gives a JSON value one spelling, so that two values
// that mean the same are the same string: object keys sorted, no
// insignificant whitespace, no HTML escaping, and every number written in
// one form (see [Number]). Guards use it to recognise a repeated call, and
// placeholders and summaries to show a call's arguments the same way in
// every view.
package canonjson

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
)

// String returns the canonical form of raw when it holds exactly one JSON
// value; ok is false otherwise (invalid JSON, trailing data, nesting the
// decoder refuses).
func String(raw []byte) (s string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", false
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", false
	}
	var b strings.Builder
	write(&b, v)
	return b.String(), true
}

// OrRaw returns the canonical form of raw, or "raw:" and raw without its
// surrounding whitespace when raw is not one JSON value, so that every
// input, valid or not, has a fingerprint.
func OrRaw(raw []byte) string {
	if s, ok := String(raw); ok {
		return s
	}
	return "raw:" + string(bytes.TrimSpace(raw))
}

func write(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case json.Number:
		b.WriteString(Number(string(x)))
	case string:
		writeString(b, x)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			write(b, e)
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
			write(b, x[k])
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

// maxPlainDigits bounds the digits of a number written without an
// exponent: beyond it, zeros a plain spelling would pad with are written
// as an exponent instead (1e400 stays short).
const maxPlainDigits = 21

// Number gives a JSON number literal its canonical spelling. Numbers are
// compared as exact decimals, never through float64, so two literals get
// the same spelling exactly when they denote the same value, however many
// digits they have: "1000000000000000.0", "1e15", "1E+15", "10e14" and
// "1000000000000000" are all "1000000000000000"; "2.50" is "2.5"; "-0" and
// "0.0e9" are "0". A value is written without an exponent when that takes
// at most 21 digits (integers like an id, decimals like 0.000125), else
// as mantissa and exponent, "1.25e+30", "3e-25". A string that is not a
// JSON number is returned unchanged.
func Number(s string) string {
	neg, digits, exp, ok := decimal(s)
	if !ok {
		return s
	}
	if digits == "" {
		return "0"
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	n := len(digits)
	// The exponent may have any size ("1e9223372036854775807" is
	// "10e9223372036854775806"); only point, compared with small bounds,
	// decides the layout.
	point := exp.add(int64(n))
	p, small := point.small()
	small = small && p >= -maxPlainDigits && p <= maxPlainDigits
	switch {
	case small && exp.sign() >= 0:
		// An integer: the digits, then the zeros.
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", int(p)-n))
	case small && p > 0 && n <= maxPlainDigits:
		// A decimal with digits before the point.
		b.WriteString(digits[:p])
		b.WriteByte('.')
		b.WriteString(digits[p:])
	case small && p <= 0 && int64(n)-p <= maxPlainDigits:
		// A decimal below 1: leading zeros after the point.
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", int(-p)))
		b.WriteString(digits)
	default:
		b.WriteByte(digits[0])
		if n > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		e := point.add(-1)
		b.WriteByte('e')
		if e.sign() >= 0 {
			b.WriteByte('+')
		}
		b.WriteString(e.String())
	}
	return b.String()
}

// decimal splits a JSON number literal into its sign, its significant
// digits (no leading or trailing zeros; "" for zero) and the power of ten
// they are multiplied by, whatever its size. ok is false when s is not a
// JSON number.
func decimal(s string) (neg bool, digits string, exp exponent, ok bool) {
	if !json.Valid([]byte(s)) || s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return false, "", exp, false
	}
	if s[0] == '-' {
		neg, s = true, s[1:]
	}
	mant, e, _ := strings.Cut(strings.ToLower(s), "e")
	exp = parseExponent(e)
	whole, frac, _ := strings.Cut(mant, ".")
	all := strings.TrimLeft(whole+frac, "0")
	trimmed := strings.TrimRight(all, "0")
	exp = exp.add(int64(len(all) - len(trimmed) - len(frac)))
	if trimmed == "" {
		return false, "", exp, true // zero has no sign
	}
	return neg, trimmed, exp, true
}
