package benchcore

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

// FuzzDecodeDataURL checks that a data URL decodes only when it is a
// base64 data URL, to a media type and bytes that encode back to a URL
// that decodes the same.
func FuzzDecodeDataURL(f *testing.F) {
	for _, s := range []string{
		"data:image/png;base64,iVBORw0KGgo=", "data:;base64,", "data:image/png,abc", "https://example.invalid/a.png",
		"data:image/png;base64,!!", "data:image/png;base64,iVBO\nRw0KGgo=", "data:a,b;base64,AA==", "data:image/png;base64",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		mime, data, ok := decodeDataURL(u)
		if !ok {
			if mime != "" || data != nil {
				t.Fatalf("%q: refused but gave %q, %d bytes", u, mime, len(data))
			}
			return
		}
		if !strings.HasPrefix(u, "data:"+mime+";base64,") || strings.Contains(mime, ",") {
			t.Fatalf("%q: media type %q", u, mime)
		}
		again := "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
		m2, d2, ok := decodeDataURL(again)
		if !ok || m2 != mime || !bytes.Equal(d2, data) {
			t.Fatalf("%q: re-encoded %q decodes to %q, %d bytes, %v", u, again, m2, len(d2), ok)
		}
	})
}
