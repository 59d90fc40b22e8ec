// Package proxy is harness in front of an agent someone else wrote: an
// HTTP proxy between the agent (Claude Code, Codex, Gemini CLI, opencode,
// an SDK loop) and its model API that applies the per-call guards to every
// tool result in the requests passing through, and records the
// conversation in the transcript store.
//
// It speaks the Anthropic Messages API, the OpenAI Responses and Chat
// Completions APIs (and ChatGPT's backend, which Codex signed in with
// ChatGPT calls with zstd-compressed bodies) and the Gemini API (and
// Google's Code Assist, which Gemini CLI signed in with Google calls),
// streamed and not. Any other request, and a model call whose body it
// cannot read, is forwarded unchanged.
//
// Each request belongs to a conversation (the X-Harness-Conversation
// header, the Responses API's prompt_cache_key, else a hash of the format,
// the model and what names the session in the first user message); a
// history that diverges from the stored one is a fork of it (fork.go).
// Each tool result is keyed by its call id and the hash of its content.
// The first time a key is seen the result is admitted through the round
// engine with the per-call guards of the default stack (package stack),
// and the results new in one request share what the turn's evidence budget
// (policy.TurnBudget) has left. The decision is kept: every later request
// carrying that result gets the same bytes, so the upstream's prompt cache
// stays warm. Only the content value of a cut result is replaced; every
// other byte reaches the upstream as the client sent it.
//
// Old results are cleared only after a pause longer than the prompt cache
// lives (idle.go), when the clear breaks no warm cache. With
// Options.DeferTools the MCP tools the first prompt does not select are
// sent as stubs (defer.go).
//
// Spilled results go to <Workspace>/.harness/spill/<conversation>/, or on
// a client's route (Proxy.Route, as the harness launchers register) to
// that client's workspace; the marker names the file's absolute path and
// the client's read tool, never a tool it lacks. Requests go to the
// upstream of their wire format (Options.Upstream). Answers are relayed as
// they arrive while the proxy reads their usage (Stats) and their text and
// calls (the store). Upstream errors pass through unchanged. Store writes
// run off the request path; a write that fails is logged and counted in
// Stats, never returned to the client.
//
// Credentials are forwarded to the upstream only (no redirects followed),
// never stored or logged.
package proxy
