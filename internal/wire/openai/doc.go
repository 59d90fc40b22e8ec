// Package openai holds the wire structs of OpenAI's two APIs that both the
// proxy (reading answers, and a request's recorded calls) and the
// importers (reading chat-message lists, mini-swe-agent trajectories and
// Codex rollouts) decode: Chat Completions' messages, tool calls, content
// parts, answer chunks and usage; Responses' items. The proxy reads
// requests in place (it edits their bytes), not through these structs.
package openai
