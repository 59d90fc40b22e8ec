// Package openai is a [harness.Model] for the Chat Completions API, built on
// the official OpenAI Go SDK. It serves OpenAI and every server that speaks
// the same wire format — vLLM, llama.cpp's server, Ollama, OpenRouter,
// DeepSeek, Gemini's OpenAI-compatible endpoint — through the base URL.
//
// Mapping between harness types and the wire format:
//
//   - System messages stay system messages, in place; Request.System is
//     sent as the first message only when Messages carries none.
//   - Tool specs become function tools; the input schema is sent as given
//     (its top-level keys sorted, so the bytes are deterministic).
//   - An assistant message's tool calls become tool_calls, their arguments
//     passed through verbatim, even when they are not valid JSON.
//   - A tool message becomes a "tool" message with the text of its text and
//     JSON parts. Tool messages cannot carry images, so the images of a run
//     of tool messages follow it as one user message of image_url parts
//     (data URLs), each introduced by a line naming its call. Images are
//     never sent as base64 text.
//   - A synthesis call (Request.Final) that still lists tools sends them
//     with tool_choice "none", so the prompt prefix stays cacheable.
//   - Usage: Input is prompt_tokens (cached ones included), Cached is
//     prompt_tokens_details.cached_tokens, CacheWrite is
//     prompt_tokens_details.cache_write_tokens where a server reports it.
//
// Retries (429, 5xx, dropped connections, honouring Retry-After) are done
// here, not by the SDK, whose own retry loop is switched off; see
// internal/retry. A rejected oversized prompt is reported as an
// error wrapping [harness.ErrContextTooLarge].
package openai
