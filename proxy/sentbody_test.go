package proxy

import (
	"bytes"
	"hash/maphash"
	"io"
	"testing"
	"testing/iotest"
)

// readAll reads r to its end.
func readAll(t testing.TB, r io.Reader) []byte {
	t.Helper()
	if r == nil {
		return nil
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSentBody: the body as sent reads, writes and measures as the
// splice of the same edits, whatever the reader's buffer, and hashes each
// element as the spliced bytes.
func TestSentBody(t *testing.T) {
	in := []byte(`{"a":[{"x":"one"},{"x":"two","y":3},{"x":"three"}],"t":[1,2]}`)
	x1 := span{Start: bytes.Index(in, []byte(`"one"`)), End: bytes.Index(in, []byte(`"one"`)) + 5}
	x3 := span{Start: bytes.Index(in, []byte(`"three"`)), End: bytes.Index(in, []byte(`"three"`)) + 7}
	tools := span{Start: bytes.Index(in, []byte(`[1,2]`)), End: bytes.Index(in, []byte(`[1,2]`)) + 5}
	elems, err := arrayElems(in, span{Start: 5, End: bytes.Index(in, []byte(`],"t"`)) + 1})
	if err != nil || len(elems) != 3 {
		t.Fatal(elems, err)
	}
	for _, tc := range []struct {
		name  string
		edits []edit
	}{
		{"no edits", nil},
		{"one", []edit{{Span: x1, New: []byte(`"1"`)}}},
		{"empty replacement and longer one", []edit{{Span: x1, New: nil}, {Span: x3, New: []byte(`"a longer text than before"`)}}},
		{"outside the elements", []edit{{Span: x3, New: []byte(`"3"`)}, {Span: tools, New: []byte(`[]`)}}},
		{"at the start and the end", []edit{{Span: span{0, 1}, New: []byte(`{ `)}, {Span: span{len(in) - 1, len(in)}, New: []byte(` }`)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := splice(in, tc.edits)
			s := sentBody{in: in, edits: tc.edits}
			if s.size() != len(want) {
				t.Errorf("size %d, want %d", s.size(), len(want))
			}
			if got := readAll(t, s.reader()); !bytes.Equal(got, want) {
				t.Errorf("read %s, want %s", got, want)
			}
			if got := readAll(t, iotest.OneByteReader(s.reader())); !bytes.Equal(got, want) {
				t.Errorf("read byte by byte %s, want %s", got, want)
			}
			if err := iotest.TestReader(s.reader(), want); err != nil {
				t.Error(err)
			}
			var w bytes.Buffer
			if _, err := io.Copy(&w, s.reader()); err != nil || !bytes.Equal(w.Bytes(), want) {
				t.Errorf("written %s (%v), want %s", w.Bytes(), err, want)
			}
			seed := maphash.MakeSeed()
			var inSums []uint64
			for _, e := range elems {
				inSums = append(inSums, maphash.Bytes(seed, in[e.Start:e.End]))
			}
			got := s.elemSums(seed, elems, inSums)
			shift := 0
			k := 0
			for i, e := range elems {
				for ; k < len(tc.edits) && tc.edits[k].Span.End <= e.Start; k++ {
					shift += len(tc.edits[k].New) - (tc.edits[k].Span.End - tc.edits[k].Span.Start)
				}
				start, end := e.Start+shift, e.End+shift
				for ; k < len(tc.edits) && tc.edits[k].Span.Start < e.End; k++ {
					d := len(tc.edits[k].New) - (tc.edits[k].Span.End - tc.edits[k].Span.Start)
					shift, end = shift+d, end+d
				}
				if h := maphash.Bytes(seed, want[start:end]); got[i] != h {
					t.Errorf("element %d: hash of %s differs", i, want[start:end])
				}
			}
		})
	}
	if r := (sentBody{}).reader(); r != nil {
		t.Errorf("a nil body reads as %T", r)
	}
}

// splice returns b with the edits applied, copied: the reference the
// in-place sentBody is checked against; edits must be sorted by start
// and must not overlap. Bytes outside the edits are copied unchanged.
func splice(b []byte, edits []edit) []byte {
	if len(edits) == 0 {
		return b
	}
	n := len(b)
	for _, e := range edits {
		n += len(e.New) - (e.Span.End - e.Span.Start)
	}
	out := make([]byte, 0, n)
	at := 0
	for _, e := range edits {
		out = append(out, b[at:e.Span.Start]...)
		out = append(out, e.New...)
		at = e.Span.End
	}
	return append(out, b[at:]...)
}
