// Package harness runs LLM agent loops (model ⇄ tools) and keeps every
// request to the model bounded and honest.
//
// An [Agent] runs one user turn at a time over a [Conversation]: it asks a
// [Model] for the next step, runs the tool calls the model makes through a
// chain of per-call [Guard]s, appends both the full results and the model's
// copy of them to the transcript, and repeats until the model answers without
// tool calls or the round limit is reached (then one synthesis call with the
// tools withheld). Each request is built by a deterministic view over the
// transcript, so per-turn policies ([ViewPolicy]) shape what the model sees
// without ever changing what is stored.
//
// The model's copy is not the log: a [ToolResult] keeps its full payload in
// Parts and what the model is shown in Model, and every cut a guard makes is
// recorded in its Cuts with a locator that gets the rest back.
//
// Tool failures — an unknown tool, arguments that are not JSON or do not
// match the tool's schema, a panic, a timeout — become results with IsError
// set that the model can read and act on. A Go error from [Agent.Run] means
// the loop itself could not go on (model unreachable, store unwritable,
// context cancelled).
package harness
