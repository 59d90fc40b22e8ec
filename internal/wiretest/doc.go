// Package wiretest is a loopback HTTP server for provider tests. It plays
// queued replies — JSON bodies, server-sent event streams, error bodies,
// dropped connections — written in a provider's documented wire format,
// and records every request exactly as the SDK sent it, so tests can assert
// the request bytes and the mapping of the replies back to harness types.
package wiretest
