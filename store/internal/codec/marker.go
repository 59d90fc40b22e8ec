package codec

import (
	"strings"
	"time"
	"unicode/utf8"
)

// MaxMarker bounds the marker kept for logs.
const MaxMarker = 600

// MarkerElision joins the head and tail of a marker longer than MaxMarker.
const MarkerElision = " … "

// Marker returns what the model copy adds to the full payload: a guard's
// copy is head + marker + tail of the payload (or a replacement), so the
// part of model between its longest common prefix and suffix with full is
// the marker. It runs in time linear in the model copy.
func Marker(full, model string) string {
	if model == full {
		return ""
	}
	p := 0
	for p < len(model) && p < len(full) && model[p] == full[p] {
		p++
	}
	for p > 0 && p < len(model) && !utf8.RuneStart(model[p]) {
		p--
	}
	q := 0
	for q < len(model)-p && q < len(full)-p && model[len(model)-1-q] == full[len(full)-1-q] {
		q++
	}
	for q > 0 && len(model)-q < len(model) && !utf8.RuneStart(model[len(model)-q]) {
		q--
	}
	m := strings.TrimSpace(model[p : len(model)-q])
	if len(m) > MaxMarker {
		// Cut at character boundaries, moving at most UTFMax-1 bytes: a
		// copy holding invalid UTF-8 keeps its bytes (trimming until the
		// half is valid would shrink it to almost nothing).
		h := MaxMarker / 2
		for i := 1; i < utf8.UTFMax && !utf8.RuneStart(m[h]); i++ {
			h--
		}
		t := len(m) - MaxMarker/2
		for i := 1; i < utf8.UTFMax && !utf8.RuneStart(m[t]); i++ {
			t++
		}
		m = m[:h] + MarkerElision + m[t:]
	}
	return m
}

// Title is the first line of a turn's input, at most 80 characters: what
// a store lists a conversation by.
func Title(input string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(input), "\n")
	line = strings.TrimSpace(line)
	if utf8.RuneCountInString(line) > 80 {
		line = string([]rune(line)[:79]) + "…"
	}
	return line
}

// NS stores a time as Unix nanoseconds; the zero time is 0.
func NS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// FromNS is the inverse of NS.
func FromNS(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}
