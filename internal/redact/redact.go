// Package redact removes credentials from text the harness shows or logs:
// the password of a URL's user info, the values of query parameters and
// key=value pairs whose name says they carry a credential (key=, api_key=,
// access_token=, client_secret=, sig=, …), the values of credential
// headers quoted as "Name: value" (Authorization, x-api-key,
// x-goog-api-key, Cookie, …) and bearer tokens. Errors that quote a URL,
// as every *url.Error does, go through [Error]. The proxy redacts every
// response body it writes itself and every log line; the CLI every error
// it prints.
package redact

import (
	"net/url"
	"regexp"
)

// mask replaces a credential's value.
const mask = "REDACTED"

var (
	// param matches name=value where the name ends in a credential word;
	// the name starts the text or follows a separator (?, &, ;, space,
	// quote, comma, parenthesis), so a word inside another is not taken.
	param = regexp.MustCompile(`(?i)(^|[?&;\s"'(,{])([a-z0-9_.\-]*(?:key|token|secret|password|passwd|pwd|signature|sig|auth|authorization|credentials?|session))=([^&\s"'#;,)}]*)`)
	// userinfo matches scheme://user:password@.
	userinfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.\-]*://[^/@\s:"']*):([^/@\s"']*)@`)
	// header matches a credential header quoted as Name: value.
	header = regexp.MustCompile(`(?i)\b((?:proxy-)?authorization|x-api-key|x-goog-api-key|api-key|x-auth-token|cookie|set-cookie)(\s*[:=]\s*)([^\r\n"]+)`)
	// bearer matches a bearer or basic token in free text.
	bearer = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[a-z0-9._~+/=\-]{8,}`)
)

// Text returns s with every credential it quotes replaced by mask.
func Text(s string) string {
	s = header.ReplaceAllString(s, "${1}${2}"+mask)
	s = bearer.ReplaceAllString(s, "${1} "+mask)
	s = userinfo.ReplaceAllString(s, "${1}:"+mask+"@")
	return param.ReplaceAllString(s, "${1}${2}="+mask)
}

// Error returns err with its message redacted by [Text] (nil for nil, err
// itself when its message quotes no credential). It unwraps to err, so
// errors.Is and errors.As see what err wraps; a *url.Error passed itself
// is unwrapped to a copy with its URL redacted.
func Error(err error) error {
	if err == nil {
		return nil
	}
	msg := Text(err.Error())
	if msg == err.Error() {
		return err
	}
	inner := err
	if ue, ok := err.(*url.Error); ok {
		c := *ue
		c.URL = Text(c.URL)
		inner = &c
	}
	return &redacted{msg: msg, err: inner}
}

// redacted is an error whose message has been redacted.
type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }

// Unwrap returns the wrapped error: a *url.Error with its URL redacted,
// or the original.
func (r *redacted) Unwrap() error { return r.err }
