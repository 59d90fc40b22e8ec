// Package mcptool exposes the tools of MCP (Model Context Protocol) servers
// as harness tools, using the official Go SDK.
//
// A [Config] is read from the .mcp.json format users already have
// ({"mcpServers": {name: {command, args, env} | {type: "http", url,
// headers}}}), with ${VAR} and ${VAR:-default} expanded from the
// environment. [Open] connects to every server and [Set.Tools] returns one
// [harness.Tool] per MCP tool: its name (namespaced "server__tool" when two
// servers offer the same name), its description and input schema, and a
// [harness.Risk] derived from the tool's annotations (readOnlyHint →
// ReadOnly, destructiveHint → Destructive, idempotentHint → Idempotent,
// openWorldHint → also Network; no annotations → Destructive), which the
// config may override per server and per tool.
//
// Every content kind of a result maps to harness parts without doubling the
// payload: text → a text part; image → an image part with the raw bytes;
// resource link → one text line; embedded resource → its text, an image part
// for an image blob, or a one-line note for another blob; audio → a one-line
// note for the model, the bytes kept in the result's Meta (harness parts
// have no audio kind, and no provider takes audio in a tool result);
// structuredContent → ToolResult.Structured, unless the text content already
// carries it, in which case only its shape is kept in Meta (see
// convertResult).
//
// Faults become results the model can read, never a broken loop: a tool's
// own error (isError) is an IsError result; a server that dies or
// disconnects mid-call gives an IsError result naming the server with the
// tail of its stderr, and is restarted on the next call; each call has a
// timeout; a server message larger than Options.MaxMessageBytes (64 MiB by
// default) is refused and the server restarted, so memory stays bounded.
// A server that fails to start is an error naming it, with the tail of its
// stderr.
//
// Size ceilings are not this package's job: compose the agent's
// guards (guard.ResultPolicy) around every tool, MCP or not.
package mcptool
