package replay

import (
	"bytes"
	"fmt"
	"testing"
)

// arrayBoth walks data with arrayRecords and with arrayElems (the whole
// array decoded at once), returning what each found: the elements with
// their offsets (none when there is an error), then the error.
func arrayBoth(data []byte) (walked, whole string) {
	src := &source{name: "a.json", data: data}
	var w bytes.Buffer
	err := arrayRecords(src, bytes.NewReader(data), 0)(func(v rawValue, path string) error {
		fmt.Fprintf(&w, "%s@%d=%s\n", path, v.off, v.raw)
		return nil
	})
	if err != nil {
		w.Reset() // the elements before the error were passed on; whole has none
	}
	fmt.Fprintf(&w, "err %v", err)
	var o bytes.Buffer
	elems, err := src.arrayElems(0, data, "")
	if err == nil {
		for i, v := range elems {
			fmt.Fprintf(&o, "[%d]@%d=%s\n", i, v.off, v.raw)
		}
	}
	fmt.Fprintf(&o, "err %v", err)
	return w.String(), o.String()
}

// TestArrayRecords: walking an array one element at a time finds the
// elements, offsets and first error that decoding it whole does.
func TestArrayRecords(t *testing.T) {
	for _, data := range []string{
		`[]`, ` [ ] `, `[1]`, `[{"a":1}, {"b":[2,3]} ,"x"]`, "\n[\n{\"a\":\n1}\n]\n",
		`[`, `[1`, `[1,`, `[1,]`, `[1 2]`, `[{"a":1}{"b":2}]`, `[{"a":}]`, `[1] 2`, `[1]]`, `[}`, `{}`, `[1,"\x01"]`,
	} {
		walked, whole := arrayBoth([]byte(data))
		if walked != whole {
			t.Errorf("%q:\nwalked %s\nwhole  %s", data, walked, whole)
		}
	}
}

// FuzzArrayRecords: whatever the bytes, walking an array element by
// element agrees with decoding it whole.
func FuzzArrayRecords(f *testing.F) {
	for _, s := range []string{`[]`, `[{"a":1}, {"b":[2,3]} ,"x"]`, `[1 2]`, `[{"a":}]`, `[1] 2`, "[\n{\"type\":\"user\"}\n,\n{}]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if d := bytes.TrimLeft(data, jsonSpace); len(d) == 0 || d[0] != '[' {
			return
		}
		walked, whole := arrayBoth(data)
		if walked != whole {
			t.Fatalf("%q:\nwalked %s\nwhole  %s", data, walked, whole)
		}
	})
}
