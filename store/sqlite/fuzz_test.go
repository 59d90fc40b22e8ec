package sqlite

import (
	"fmt"
	"github.com/agentharness/harness/store/internal/storefix"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentharness/harness"
)

// FuzzToolSpecStored checks that any tool schema a request sends comes back
// from the store byte for byte with its risk (invalid UTF-8, schemas that
// are not JSON, empty fields), once however often it is sent.
func FuzzToolSpecStored(f *testing.F) {
	f.Add("read_file", "Read a file.", []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`), uint8(harness.ReadOnly), "You code.")
	f.Add("", "", []byte(nil), uint8(0), "")
	f.Add("\xff\xfe", "desc \x00 with NUL", []byte("not json \xfe"), uint8(0xff), "sys \xc3")
	f.Add("a", "b", []byte(" { } "), uint8(harness.Destructive|harness.Network), strings.Repeat("long prompt ", 500))
	s := openTemp(f, nil)
	n := 0
	f.Fuzz(func(t *testing.T, name, desc string, schema []byte, risk uint8, system string) {
		n++
		spec := harness.ToolSpec{Name: name, Description: desc, InputSchema: schema, Risk: harness.Risk(risk)}
		storefix.ToolSpecRoundTrip(t, s, fmt.Sprintf("c_fuzz_%d", n), spec, system)
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
