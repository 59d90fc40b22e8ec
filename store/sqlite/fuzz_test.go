package sqlite

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentharness/harness"
)

// FuzzMarkerOf checks the marker extraction on any pair of texts: it is
// part of the model copy, bounded, valid UTF-8 when the copy is, and empty
// only when the copy adds nothing.
func FuzzMarkerOf(f *testing.F) {
	f.Add("head middle tail", "head [cut 6 bytes] tail")
	f.Add("aaaaaaaa", "aaa[x]aaa")
	f.Add("é🙂語", "é[…]語")
	f.Add("", "replacement")
	f.Add("same", "same")
	f.Add(strings.Repeat("x", 2000), strings.Repeat("y", 2000))
	f.Fuzz(func(t *testing.T, full, model string) {
		m := markerOf(full, model)
		if model == full && m != "" {
			t.Fatalf("identical copy has marker %q", m)
		}
		if len(m) > maxMarker+len(markerElision) {
			t.Fatalf("marker of %d bytes", len(m))
		}
		if utf8.ValidString(model) && !utf8.ValidString(m) {
			t.Fatalf("invalid UTF-8 marker %q from %q", m, model)
		}
		if !strings.Contains(model, m) && !elided(model, m) {
			t.Fatalf("marker %q is neither in the model copy %q nor a head and tail of it", m, model)
		}
	})
}

// elided reports whether m is head + markerElision + tail with head and
// tail both in model, each at least maxMarker/2 - 3 bytes (the cut moves
// to a character boundary), in that order.
func elided(model, m string) bool {
	for i := 0; i+len(markerElision) <= len(m); i++ {
		if !strings.HasPrefix(m[i:], markerElision) {
			continue
		}
		head, tail := m[:i], m[i+len(markerElision):]
		if len(head) < maxMarker/2-3 || len(tail) < maxMarker/2-3 {
			continue
		}
		if h := strings.Index(model, head); h >= 0 && strings.Contains(model[h+len(head):], tail) {
			return true
		}
	}
	return false
}

// FuzzPartsEncoding checks that any parts come back byte for byte as they
// were stored: invalid UTF-8, JSON parts that do not parse, whitespace.
func FuzzPartsEncoding(f *testing.F) {
	f.Add("plain text", "", []byte(nil), "", 1)
	f.Add("", "image/png", []byte{0x89, 'P', 'N', 'G'}, "", 2)
	f.Add("with json", "", []byte(nil), "{ \"a\" : [1, 2] }\n", 3)
	f.Add("\xff invalid", "", []byte(nil), "not json \xfe", 3)
	f.Add("\xe7\xdb", "0", []byte("0"), "", 2)
	f.Fuzz(func(t *testing.T, text, mime string, data []byte, js string, shape int) {
		var parts []harness.Part
		switch shape % 4 {
		case 0:
			parts = nil
		case 1:
			parts = []harness.Part{harness.TextPart(text)}
		case 2:
			parts = []harness.Part{harness.TextPart(text), harness.ImagePart(mime, data)}
		case 3:
			parts = []harness.Part{harness.TextPart(text), harness.JSONPart([]byte(js))}
		}
		s, b, err := encodeParts(parts)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeParts(s, b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(normalize(got), normalize(parts)) {
			t.Fatalf("got %#v, want %#v", got, parts)
		}
	})
}

// normalize treats empty and nil byte slices alike (JSON cannot tell them
// apart, and no reader can either).
func normalize(parts []harness.Part) []harness.Part {
	out := append([]harness.Part(nil), parts...)
	for i := range out {
		if len(out[i].Data) == 0 {
			out[i].Data = nil
		}
		if len(out[i].JSON) == 0 {
			out[i].JSON = nil
		}
	}
	return out
}
