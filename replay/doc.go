// Package replay imports recorded agent transcripts and re-applies context
// policies to them without a model.
//
// Importers turn a recording — a Claude Code session (parseClaudeCodeAll:
// the main chain, each compaction segment and each subagent), a Codex CLI
// rollout (parseCodexAll), a SWE-agent trajectory (parseSWEAgent), a
// Gemini CLI chat (parseGeminiCLI), opencode's history database
// (parseOpencode: every session, each compaction's part and each
// subagent's session), a mini-swe-agent trajectory
// (*.traj.json), a plain OpenAI chat-message list (a JSON array, a
// {"messages": [...]} object, or JSONL with one message per line), a
// harness conversation (the JSON of a [harness.Conversation]), or harness's
// own transcript store (the SQLite file of store/sqlite, every
// conversation in it: parseStore), recognised by content (sniff,
// [ParseAll]) — into a provider-neutral
// [Recording]: the model calls in the order they were made, each with the
// position of its request in the source, the assistant message it
// produced, the usage the provider reported for it, and the tool results
// that followed, both in full and as the recording agent showed them.
// What a format does not record (Claude Code's and Codex's system prompt
// and tool schemas, among others) is said in [Recording.Warnings], and
// [Supply] fills it in.
//
// [Replay] rebuilds the conversation round by round, runs every recorded
// result through a policy's per-call guards (a ToolFunc that returns the
// recorded result), builds the request view the policy would have sent for
// every recorded model call (harness.BuildView plus the policy's view
// policies) and measures it: input tokens (o200k), cached tokens (the
// byte-identical prefix shared with the previous request, in whole
// messages), evidence characters, and whether the evidence the agent went
// on to use was still visible or recoverable ([Needles]).
package replay
