package sqlite

import (
	"context"
	"fmt"
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

// FuzzToolSpecStored checks that any tool schema a request sends comes back
// from the store byte for byte with its risk (invalid UTF-8, schemas that
// are not JSON, empty fields), once however often it is sent.
func FuzzToolSpecStored(f *testing.F) {
	f.Add("read_file", "Read a file.", []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`), uint8(harness.ReadOnly), "You code.")
	f.Add("", "", []byte(nil), uint8(0), "")
	f.Add("\xff\xfe", "desc \x00 with NUL", []byte("not json \xfe"), uint8(0xff), "sys \xc3")
	f.Add("a", "b", []byte(" { } "), uint8(harness.Destructive|harness.Network), strings.Repeat("long prompt ", 500))
	ctx := context.Background()
	s := openTemp(f, nil)
	n := 0
	f.Fuzz(func(t *testing.T, name, desc string, schema []byte, risk uint8, system string) {
		n++
		spec := harness.ToolSpec{Name: name, Description: desc, InputSchema: schema, Risk: harness.Risk(risk)}
		other := harness.ToolSpec{Name: "other", Description: desc}
		conv := harness.NewConversation(fmt.Sprintf("c_fuzz_%d", n))
		turn := &harness.Turn{Index: 1, Input: "q"}
		if err := s.BeginTurn(ctx, conv, turn); err != nil {
			t.Fatal(err)
		}
		for round, tools := range [][]harness.ToolSpec{{spec, other}, {spec, other}, {other, spec, spec}} {
			req := &harness.Request{System: system, Tools: tools, Turn: 1, Round: round + 1}
			if err := s.AddRequest(ctx, conv, turn, req); err != nil {
				t.Fatal(err)
			}
			if err := s.AddRound(ctx, conv, turn, &harness.Round{Index: round + 1, Assistant: harness.Message{Role: harness.RoleAssistant}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.EndTurn(ctx, conv, turn); err != nil {
			t.Fatal(err)
		}
		reqs, err := s.Requests(ctx, conv.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := spec
		if len(want.InputSchema) == 0 {
			want.InputSchema = nil // none and empty send the same: nothing
		}
		for i, q := range reqs {
			if q.System != system || q.SystemBytes != len(system) || !q.Recorded {
				t.Fatalf("request %d: system %q (%d bytes), want %q", i, q.System, q.SystemBytes, system)
			}
			at := 0
			if i == 2 {
				at = 1
			}
			if !reflect.DeepEqual(q.Tools[at], want) {
				t.Fatalf("request %d: got %#v, want %#v", i, q.Tools[at], want)
			}
			bytes := 0
			for _, tool := range q.Tools {
				bytes += harness.SchemaBytes(tool)
			}
			if q.ToolBytes != bytes {
				t.Fatalf("request %d: %d tool bytes, the schemas are %d", i, q.ToolBytes, bytes)
			}
		}
		if reqs[0].ToolSet != reqs[1].ToolSet || reqs[0].ToolSet == reqs[2].ToolSet {
			t.Fatalf("tool lists %s %s %s", reqs[0].ToolSet, reqs[1].ToolSet, reqs[2].ToolSet)
		}
	})
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
		if (string(schemaKey(a)) == string(schemaKey(b))) != same {
			t.Fatalf("%#v and %#v: keys equal %v, specs equal %v", a, b, !same, same)
		}
	})
}

// FuzzSplitChunks: the chunks of a payload join back to it, none is larger
// than the chunk size, and valid UTF-8 stays valid in every chunk.
func FuzzSplitChunks(f *testing.F) {
	f.Add("line é 漢字 🙂\n", 4)
	f.Add(strings.Repeat("🙂", 100), 5)
	f.Add("\xff\xfe\x80\x80\x80\x80abc", 4)
	f.Add("", 1)
	f.Fuzz(func(t *testing.T, s string, size int) {
		size = 4 + int(uint(size)%64)
		chunks := splitChunks(s, size)
		if strings.Join(chunks, "") != s {
			t.Fatal("chunks do not join back")
		}
		for _, c := range chunks {
			if len(c) == 0 || len(c) > size {
				t.Fatalf("chunk of %d bytes, size %d", len(c), size)
			}
			if utf8.ValidString(s) && !utf8.ValidString(c) {
				t.Fatalf("valid text cut inside a character: %q", c)
			}
		}
	})
}
