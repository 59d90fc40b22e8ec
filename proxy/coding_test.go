package proxy

import (
	"bytes"
	"compress/gzip"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestCompressedRequest: a model call whose body is zstd- or
// gzip-compressed (Codex signed in with ChatGPT compresses with zstd) is
// read and cut as any other and goes upstream uncompressed, without its
// Content-Encoding; a body that does not decode gets a 400, one that
// decodes past the request limit a 413, and neither reaches the upstream.
func TestCompressedRequest(t *testing.T) {
	zstdOf := func(b []byte) []byte {
		enc, _ := zstd.NewWriter(nil)
		defer enc.Close()
		return enc.EncodeAll(b, nil)
	}
	gzipOf := func(b []byte) []byte {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		_, _ = w.Write(b)
		_ = w.Close()
		return buf.Bytes()
	}
	lock := lockFile(100_000)
	body := chainRequest("", `{"role":"user","content":"Which version of zod?"}`,
		`{"type":"function_call","call_id":"call_1","name":"shell","arguments":"{}"}`, callOutput("call_1", lock))
	for _, tc := range []struct {
		coding string
		body   []byte
		status int
	}{
		{"zstd", zstdOf(body), 200},
		{"gzip", gzipOf(body), 200},
		{"zstd", []byte("(\xb5/\xfd not zstd"), 400},
		{"gzip", []byte("not gzip"), 400},
		{"zstd", zstdOf(bytes.Repeat([]byte(" "), 3<<20)), 413},
	} {
		r := newRig(t, &Options{MaxRequestBytes: 2 << 20})
		r.up.Enqueue(responsesAnswer("resp_1", ""))
		status, _, got := r.post("/v1/responses", tc.body, map[string]string{"Content-Encoding": tc.coding})
		if status != tc.status {
			t.Errorf("%s: status %d (%s), want %d", tc.coding, status, got, tc.status)
			continue
		}
		sent := r.up.Requests()
		if tc.status != 200 {
			if len(sent) != 0 {
				t.Errorf("%s: a body that does not decode reached the upstream", tc.coding)
			}
			continue
		}
		if len(sent) != 1 || sent[0].Header.Get("Content-Encoding") != "" || !bytes.HasPrefix(sent[0].Body, []byte(`{"model"`)) {
			t.Fatalf("%s: the upstream got %d requests, Content-Encoding %q, body %.40q", tc.coding, len(sent), sent[0].Header.Get("Content-Encoding"), sent[0].Body)
		}
		if len(sent[0].Body) >= len(body) || !strings.Contains(string(sent[0].Body), "[harness: shell returned") {
			t.Errorf("%s: the lock file was not cut: %d bytes went upstream of %d", tc.coding, len(sent[0].Body), len(body))
		}
	}
}

// FuzzDecodeBody: any body under any of the codings decodes within the
// request limit or is refused with a 400 or 413, never a panic.
func FuzzDecodeBody(f *testing.F) {
	enc, _ := zstd.NewWriter(nil)
	f.Add("zstd", enc.EncodeAll([]byte(`{"model":"m","input":[]}`), nil))
	enc.Close()
	f.Add("gzip", []byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"))
	f.Add("br", []byte("x"))
	f.Fuzz(func(t *testing.T, coding string, data []byte) {
		p := &Proxy{opts: Options{MaxRequestBytes: 1 << 16}}
		w := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/v1/responses", nil)
		r.Header.Set("Content-Encoding", coding)
		bb := &bodyBuf{b: data}
		bb.refs.Store(1)
		out, err := p.decodeBody(w, r, bb)
		switch {
		case err != nil && w.Code != 400 && w.Code != 413:
			t.Errorf("%q: error %v answered %d", coding, err, w.Code)
		case err == nil && int64(len(out.bytes())) > p.opts.MaxRequestBytes && r.Header.Get("Content-Encoding") == "":
			t.Errorf("%q: decoded %d bytes past the limit", coding, len(out.bytes()))
		}
	})
}
