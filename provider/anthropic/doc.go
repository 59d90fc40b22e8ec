// Package anthropic is a [harness.Model] for Anthropic's Messages API,
// built on the official Anthropic Go SDK.
//
// Mapping between harness types and the wire format:
//
//   - Every system message (and Request.System when Messages carries none)
//     goes to the system field, one text block each.
//   - Tool messages become tool_result blocks (is_error set for failed
//     calls) in a user message; consecutive messages of one role are merged
//     into one message, as the API requires all results of a round to
//     follow the assistant message in one user message.
//   - Images of tool results go as image blocks inside the tool_result
//     (a type the API does not take is described in text); JSON parts go
//     as text.
//   - An assistant message's tool calls become tool_use blocks. Their input
//     must be a JSON object: arguments that are not (the model sent invalid
//     JSON, which the agent reported back to it) are sent as {}.
//   - A synthesis call (Request.Final) that still lists tools sends them
//     with tool_choice none. One with no tools, whose history holds
//     tool_use blocks, declares the tools the history used (name only) with
//     tool_choice none: the API refuses tool blocks in a request that
//     defines no tools.
//   - Usage: Input counts every prompt token — input_tokens +
//     cache_read_input_tokens + cache_creation_input_tokens — Cached is
//     cache_read_input_tokens and CacheWrite cache_creation_input_tokens.
//
// Prompt caching: the request carries up to three cache_control
// breakpoints on its stable prefix — the end of the system prompt (which
// covers the tools before it; the last tool when there is no system
// prompt), the end of the previous request's messages, and the end of this
// one's; harness views are deterministic, so each round's messages are a
// prefix of the next round's.
//
// Credentials: ANTHROPIC_API_KEY is sent as the x-api-key header, and
// ANTHROPIC_AUTH_TOKEN, when there is no key, as Authorization: Bearer.
// Only these two variables and ANTHROPIC_BASE_URL are read.
//
// Retries (429, 5xx, dropped connections, honouring Retry-After) are done
// here, not by the SDK. A prompt rejected as too long is an error wrapping
// [harness.ErrContextTooLarge].
package anthropic
