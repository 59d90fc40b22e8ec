package codec

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentharness/harness"
)

// TestDecodeRefsRefusesGarbage: a refs column that is not what encodeRefs
// writes is an error naming the problem, never a guessed list.
func TestDecodeRefsRefusesGarbage(t *testing.T) {
	for _, col := range []string{``, `null`, `"call_a"`, `{"b64":"eA=="}`, `[1]`, `[null]`, `["a",true]`, `[{}]`, `[{"b64":""}]`,
		`[{"b64":"not base64!"}]`, `[{"b64":"eA==","x":1}]`, `["a"`, `["\ud800"`, `[[]]`} {
		if refs, err := DecodeRefs(col, true); err == nil {
			t.Errorf("%q decodes to %#v", col, refs)
		}
	}
	for col, want := range map[string][]string{`[]`: {}, `["a","b"]`: {"a", "b"}, `[{"b64":"/w=="},"\u0000"]`: {"\xff", "\x00"}, ` [ "a" ] `: {"a"}} {
		if refs, err := DecodeRefs(col, true); err != nil || !reflect.DeepEqual(refs, want) {
			t.Errorf("%q decodes to %#v, %v; want %#v", col, refs, err, want)
		}
	}
	if refs, err := DecodeRefs("", false); refs != nil || err != nil {
		t.Errorf("NULL decodes to %#v, %v", refs, err)
	}
}

// FuzzRefsEncoding checks that any list of call ids comes back byte for
// byte, nil as nil and empty as empty.
func FuzzRefsEncoding(f *testing.F) {
	f.Add("call_a", "call_b", "call_c", uint8(2))
	f.Add("\xff\xfe", "x\x00y", `"`, uint8(3))
	f.Add("", "", "", uint8(0))
	f.Add("é🙂", "\xed\xa0\x80", "<&>\u2028", uint8(3))
	f.Add("a", "b", "c", uint8(4))
	f.Fuzz(func(t *testing.T, a, b, c string, shape uint8) {
		var refs []string
		if n := int(shape % 5); n < 4 {
			refs = []string{a, b, c}[:min(n, 3)]
		}
		col, valid, err := EncodeRefs(refs)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeRefs(col, valid)
		if err != nil {
			t.Fatalf("%q: %v", col, err)
		}
		if !reflect.DeepEqual(got, refs) {
			t.Fatalf("got %#v, want %#v (column %q)", got, refs, col)
		}
	})
}

// FuzzDecodeRefs reads any column text: it never panics, and a list it
// accepts encodes and decodes to itself.
func FuzzDecodeRefs(f *testing.F) {
	for _, s := range []string{`["call_a","call_b"]`, `[]`, `[{"b64":"/w=="}]`, `[{"b64":""}]`, `null`, `[null]`, `["\ud800"]`, `[{"B64":"eA=="}]`, "[\"\xff\"]", `{`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, col string) {
		refs, err := DecodeRefs(col, true)
		if err != nil {
			return
		}
		if refs == nil {
			t.Fatalf("%q decodes to nil without an error", col)
		}
		again, ok, err := EncodeRefs(refs)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeRefs(again, ok)
		if err != nil || !reflect.DeepEqual(back, refs) {
			t.Fatalf("%q → %#v → %q → %#v, %v", col, refs, again, back, err)
		}
	})
}

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
		m := Marker(full, model)
		if model == full && m != "" {
			t.Fatalf("identical copy has marker %q", m)
		}
		if len(m) > MaxMarker+len(MarkerElision) {
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

// elided reports whether m is head + MarkerElision + tail with head and
// tail both in model, each at least MaxMarker/2 - 3 bytes (the cut moves
// to a character boundary), in that order.
func elided(model, m string) bool {
	for i := 0; i+len(MarkerElision) <= len(m); i++ {
		if !strings.HasPrefix(m[i:], MarkerElision) {
			continue
		}
		head, tail := m[:i], m[i+len(MarkerElision):]
		if len(head) < MaxMarker/2-3 || len(tail) < MaxMarker/2-3 {
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
		s, isText, b, err := EncodeParts(parts)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeParts(s, isText, b)
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

// FuzzSchemaKey checks that two schemas share a content hash only when
// they are the same schema (an empty input schema is the same as none).
func FuzzSchemaKey(f *testing.F) {
	f.Add("ab", "c", []byte(nil), uint8(0), "a", "bc", []byte(nil), uint8(0))
	f.Add("a", "b", []byte("c"), uint8(1), "a", "bc", []byte(nil), uint8(1))
	f.Add("a", "", []byte("x"), uint8(1), "a", "", []byte("x"), uint8(2))
	f.Fuzz(func(t *testing.T, n1, d1 string, s1 []byte, r1 uint8, n2, d2 string, s2 []byte, r2 uint8) {
		a := harness.ToolSpec{Name: n1, Description: d1, InputSchema: s1, Risk: harness.Risk(r1)}
		b := harness.ToolSpec{Name: n2, Description: d2, InputSchema: s2, Risk: harness.Risk(r2)}
		same := n1 == n2 && d1 == d2 && string(s1) == string(s2) && r1 == r2
		if (string(SchemaKey(a)) == string(SchemaKey(b))) != same {
			t.Fatalf("%#v and %#v: keys equal %v, specs equal %v", a, b, !same, same)
		}
	})
}

func TestMarkerOf(t *testing.T) {
	full := strings.Repeat("abcdefghij\n", 100)
	tests := []struct{ model, want string }{
		{full, ""},
		{full[:30] + "\n… [cut 1000 bytes, see .harness/spill/x.txt] …\n" + full[len(full)-22:], "… [cut 1000 bytes, see .harness/spill/x.txt] …"},
		{"[repeat of call_1: nothing changed]", "[repeat of call_1: nothing changed]"},
		{full[:50] + "\n(trimmed)", "(trimmed)"},
	}
	for _, tt := range tests {
		if got := Marker(full, tt.model); got != tt.want {
			t.Errorf("markerOf = %q, want %q", got, tt.want)
		}
	}
	long := Marker("x", strings.Repeat("é", 2000))
	if len(long) > MaxMarker+10 || !strings.Contains(long, " … ") {
		t.Errorf("a long marker is not shortened: %d bytes", len(long))
	}
	// A copy of invalid UTF-8 keeps a full-size head and tail.
	if bad := Marker("x", strings.Repeat("a\xff", 2000)); len(bad) != MaxMarker+len(MarkerElision) {
		t.Errorf("a marker of invalid UTF-8 shrank to %d bytes: %q", len(bad), bad)
	}
}

func TestSchemaKeyIsUnambiguous(t *testing.T) {
	// Shifting bytes between fields must change the key.
	specs := []harness.ToolSpec{
		{Name: "ab", Description: "c"},
		{Name: "a", Description: "bc"},
		{Name: "a", Description: "b", InputSchema: json.RawMessage("c")},
		{Name: "a", Description: "bc", Risk: harness.ReadOnly},
		{Name: "a", Description: "bc", InputSchema: json.RawMessage("")},
	}
	seen := map[string]int{}
	for i, s := range specs {
		h := SchemaHash(s)
		if j, dup := seen[h]; dup && !(i == 4 && j == 1) {
			t.Errorf("specs %d and %d share hash %s", j, i, h)
		}
		seen[h] = i
	}
	if SchemaHash(specs[4]) != SchemaHash(specs[1]) {
		t.Error("an empty input schema and none hash differently (both send no schema)")
	}
}
