package attempt

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
)

// MaxBody is how much of an error body is kept.
const MaxBody = 64 << 10

// Info is the server's answer to one attempt.
type Info struct {
	mu     sync.Mutex
	status int
	header http.Header
	body   []byte
}

type key struct{}

// With returns ctx carrying a fresh Info for one attempt.
func With(ctx context.Context) (context.Context, *Info) {
	info := &Info{}
	return context.WithValue(ctx, key{}, info), info
}

// Status returns the HTTP status of the response, 0 when none arrived.
func (i *Info) Status() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.status
}

// Header returns the response headers, nil when none arrived.
func (i *Info) Header() http.Header {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.header
}

// Body returns the start of an error response's body.
func (i *Info) Body() []byte {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.body
}

// Middleware records the response to a request whose context carries an
// Info. Error bodies are read (up to MaxBody) and handed on unchanged.
func Middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	res, err := next(req)
	info, _ := req.Context().Value(key{}).(*Info)
	if info == nil || res == nil {
		return res, err
	}
	info.mu.Lock()
	defer info.mu.Unlock()
	info.status = res.StatusCode
	info.header = res.Header.Clone()
	if res.StatusCode >= 400 && res.Body != nil {
		head, rerr := io.ReadAll(io.LimitReader(res.Body, MaxBody))
		info.body = head
		rest := res.Body
		res.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), errReader{rerr}, rest), rest}
	}
	return res, err
}

// errReader replays a read error after the bytes read before it.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
}

// Message extracts a human-readable error message from an error body:
// error.message (OpenAI, Anthropic), message or detail (other compatible
// servers), else the body's text, cut to 500 bytes.
func Message(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		if len(v.Error) > 0 && json.Unmarshal(v.Error, &inner) == nil && inner.Message != "" {
			return inner.Message
		}
		var s string
		if len(v.Error) > 0 && json.Unmarshal(v.Error, &s) == nil && s != "" {
			return s
		}
		if v.Message != "" {
			return v.Message
		}
		if len(v.Detail) > 0 {
			if json.Unmarshal(v.Detail, &s) == nil {
				return s
			}
			return string(v.Detail)
		}
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 500 {
		s = strings.ToValidUTF8(s[:500], "") + "…"
	}
	return s
}
