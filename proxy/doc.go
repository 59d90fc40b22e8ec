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
// when present, otherwise a hash of the format, the model, the first user
// message and what names the session: Claude Code's session id, Gemini
// CLI's session context in that message, else the system prompt (a client
// that names its session re-makes its system prompt and the date in its
// first message when the session is resumed). A request whose history
// diverges from its conversation's stored one — another input for a turn
// both hold, or other call ids at a round both hold, as when two runs
// share a key or a client rewinds or edits an earlier message — belongs
// to a fork: a conversation of its own, named from the parent's id and
// the diverging history, holding the shared prefix (sent with the
// parent's decisions) and its own rounds (see fork.go). Each tool result in the
// history is keyed by its call id and the SHA-256 of its content bytes.
// The first time a key is seen, the result is admitted through the round
// engine (harness.Engine.Admit with harness.Returning) and the per-call
// guards of the default stack (package stack: guard.ResultPolicy's 24 KiB
// ceiling with a spill file, then guard.Collapse); the results new in one
// request then share what the turn's evidence budget (policy.TurnBudget)
// has left, by water-filling. Only a turn's first
// harness.DefaultMaxRounds rounds share the budget, as under the engine's
// policy.OnArrival: the results of a long turn's later rounds pass whole.
// The decision is kept; every later request
// carrying that result gets exactly the same bytes, so the upstream's
// prompt cache stays warm (until a pause has emptied it: see below).
//
// The stuck verdict is not applied: the client's loop owns its rounds, so
// the proxy cannot stop them. Compaction is applied in one case only.
// Clearing a result already forwarded breaks the upstream's prompt cache,
// and the client re-sends the whole history every time, so a clear must
// be a decision of its own, replayed in every later request. While the
// cache is warm that break costs more than the clear saves, so the proxy
// never clears; after a pause longer than the cache lives (the time since
// the proxy finished relaying the conversation's last answer, on
// Options.Now's clock, against the lifetime the request's wire format
// documents, or Options.ClearWhenIdle) the cache is gone and the clear
// costs nothing (Options.NoClearWhenIdle turns it off). At such a
// request the proxy runs the engine's idle clear
// (policy.CompactPolicy.ClearWhenIdle) over a view of the conversation:
// every result outside the newest 4 rounds and the working set (the
// results the agent quoted in the 3 newest rounds) becomes a one-line
// placeholder that names a file holding the whole result — the ceiling's
// spill file, or a new one beside it — and that placeholder is the
// result's decision from then on, so the cache is rebuilt once. Stats
// counts these clears (and each as the cache break it is); the store keeps
// every result as sent, and the clear as a policy event a restarted proxy
// reads back. Only the content value of a cut or cleared result is
// replaced: every other byte of the request — unknown fields, key order,
// whitespace — reaches the upstream as the client sent it.
//
// With Options.DeferTools the proxy also rewrites a Messages, Responses or
// Gemini request's tools array (a Chat Completions one from opencode): the
// MCP tools, by the sending client's naming rule, that the conversation's
// first user prompt does not select go as toolselect.Stub, the same bytes
// on every request (see defer.go and docs/design.md, "Deferred MCP tools
// in the proxy").
//
// Spilled results go to <Workspace>/.harness/spill/<conversation>/ — on a
// client's route (Proxy.Route, as the harness launchers register) to that
// client's workspace — and the marker names the file's absolute path and
// the client's read tool; what Collapse and the turn budget take is named
// by a spill file too, since the client has no recall tool. Requests go
// to the upstream of their wire format (Options.Upstream).
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
