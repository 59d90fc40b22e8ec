// Package attempt records what the server answered to one attempt of a
// provider call — status, headers and, for an error, the body — through an
// SDK middleware. Retry decisions and error messages then rest on the wire
// response itself, whatever shape the SDK gives its error (a compatible
// server may send a plain-text 503 or an error body the SDK cannot parse).
package attempt
