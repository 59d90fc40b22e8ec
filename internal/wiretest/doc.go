// Package wiretest is a loopback HTTP server for tests that talk to a model
// API: the providers' SDK tests and the proxy's tests, including those that
// run real agent CLIs. It plays queued replies — JSON bodies, server-sent
// event streams, error bodies, dropped connections — written in a
// provider's documented wire format, or answers each request with a
// script (Server.Respond) when a client's requests cannot be known in
// advance, and records every request exactly as it was sent, so tests can
// assert the request bytes. AnthropicStream, ResponsesStream, ChatStream
// and GeminiStream build streamed answers in the four formats; ErrorSuite
// is the table of error answers (retries, 4xx, cancellation, a context too
// large) every provider's model is tested against, in its own format.
package wiretest
