package proxy

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// decodeBody undoes the content coding of a model call's body, so that
// the proxy reads and rewrites its JSON: Codex signed in with ChatGPT
// sends its calls zstd-compressed. The call then goes upstream
// uncompressed (the coding is the transport's, not the call's meaning),
// its Content-Encoding header dropped. A coding the proxy does not know
// stays as it came (the body does not read as the format's, so it is
// forwarded unchanged); a body that does not decode gets a 400, and one
// that decodes to more than the request limit a 413.
func (p *Proxy) decodeBody(w http.ResponseWriter, r *http.Request, bb *bodyBuf) (*bodyBuf, error) {
	coding := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding")))
	if bb == nil || coding == "" || coding == "identity" {
		return bb, nil
	}
	var rd io.Reader
	switch coding {
	case "zstd":
		d, err := zstd.NewReader(bytes.NewReader(bb.bytes()), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(p.opts.MaxRequestBytes)+1))
		if err != nil {
			return nil, p.undecodable(w, bb, coding, err)
		}
		defer d.Close()
		rd = d
	case "gzip", "x-gzip":
		g, err := gzip.NewReader(bytes.NewReader(bb.bytes()))
		if err != nil {
			return nil, p.undecodable(w, bb, coding, err)
		}
		rd = g
	default:
		return bb, nil
	}
	body, err := io.ReadAll(io.LimitReader(rd, p.opts.MaxRequestBytes+1))
	if err == nil && int64(len(body)) > p.opts.MaxRequestBytes || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		bb.release()
		proxyError(w, http.StatusRequestEntityTooLarge, "request_too_large",
			fmt.Sprintf("harness proxy: the %s request body decodes to more than %d bytes (the proxy's request limit, --max-request-bytes)", coding, p.opts.MaxRequestBytes))
		return nil, fmt.Errorf("the request body decodes to more than %d bytes", p.opts.MaxRequestBytes)
	}
	if err != nil {
		return nil, p.undecodable(w, bb, coding, err)
	}
	bb.release()
	r.Header.Del("Content-Encoding")
	out := &bodyBuf{b: body}
	out.refs.Store(1)
	return out, nil
}

// undecodable answers a body that does not decode as its coding says.
func (p *Proxy) undecodable(w http.ResponseWriter, bb *bodyBuf, coding string, err error) error {
	bb.release()
	proxyError(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("harness proxy: the request body is not valid %s: %v", coding, err))
	return fmt.Errorf("decoding the %s request body: %w", coding, err)
}
