// Package proxy is harness in front of an agent someone else wrote: an
// HTTP proxy between the agent (Claude Code, Codex, Gemini CLI, opencode,
// an SDK loop) and its model API that applies the per-call guards to every
// tool result in the requests passing through, and records the
// conversation in the transcript store.
//
// It speaks the Anthropic Messages API (POST /v1/messages), the OpenAI
// Responses API (POST …/responses), OpenAI Chat Completions (POST
// …/chat/completions) and the Gemini API (…/models/M:generateContent,
// :streamGenerateContent), streamed and not. Any other request is
// forwarded unchanged; so is a model call whose body the proxy cannot
// read.
//
// Each request belongs to a conversation: the X-Harness-Conversation
// header when the client sets it, the Responses API's prompt_cache_key
// when present, otherwise a hash of the format, the model, the system
// prompt and the first user message as sent. Each tool result in the
// history is keyed by its call id and the SHA-256 of its content bytes.
// The first time a key is seen, the result is admitted through the round
// engine (harness.Engine.Admit with harness.Returning) and the per-call
// guards of the default stack (package stack: guard.ResultPolicy's 24 KiB
// ceiling with a spill file, then guard.Collapse); the results new in one
// request then share what the turn's evidence budget (policy.TurnBudget)
// has left, by water-filling. The decision is kept; every later request
// carrying that result gets exactly the same bytes, so the upstream's
// prompt cache stays warm.
//
// The stuck verdict and compaction are not applied. The client's loop owns
// its rounds, so the proxy cannot stop them; and compaction clears results
// already forwarded, which breaks the upstream's cache at every clearing
// and, since the client re-sends the whole history each time, would have
// to be replayed by the proxy on every later request to stay cleared. The
// proxy only ever decides a result once, on arrival. Only the content value of a cut
// result is replaced: every other byte of the request — unknown fields,
// key order, whitespace — reaches the upstream as the client sent it.
//
// Spilled results go to <Workspace>/.harness/spill/<conversation>/ and the
// marker names the file's absolute path, for the agent's own file tools.
// Answers are relayed as they arrive — a server-sent event stream event by
// event, each flushed — while the proxy reads the usage the upstream
// reports (for /stats) and the assistant's text and calls (for the store).
// Upstream errors pass through unchanged, status, headers and body.
//
// Store writes run off the request path, one queue per conversation; a
// write that fails is logged and counted in Stats, never returned to the
// client. The proxy claims a conversation in the store only while it
// writes, so a turn the client goes on with after the proxy restarts, or
// through another proxy on the same database, is continued
// (store.TurnResumer), not stored as interrupted.
//
// Credentials (authorization, x-api-key, x-goog-api-key) are forwarded to
// the configured upstream only (redirects are not followed) and are never
// stored or logged: the store holds no header at all.
package proxy
