// Package replay imports recorded agent transcripts: the history of the
// agents harness measures, for harness audit and bench.
//
// Importers turn a recording — a Claude Code session (parseClaudeCodeAll:
// the main chain, each compaction segment and each subagent; or what
// claude -p printed with --output-format stream-json or json), a Codex CLI
// rollout (parseCodexAll; or what codex exec --json printed), a SWE-agent trajectory (parseSWEAgent), an
// OpenHands event stream (parseOpenHandsAll: a trajectory, or an
// evaluation's output.jsonl, one recording per instance), a
// Gemini CLI chat (parseGeminiCLI), opencode's history database
// (parseOpencode: every session, each compaction's part and each
// subagent's session; or what opencode run --format json printed), a mini-swe-agent trajectory
// (*.traj.json), a plain chat-message list (a JSON array, a
// {"messages": [...]} object such as a logged request body, or JSONL with
// one message per line) of OpenAI chat messages, of the Anthropic
// Messages API's content blocks or of OpenAI Responses API input items, a
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
// Importing streams: a file is read one record at a time where its format
// allows (see Load), so memory follows the largest record, not the file.
// Replaying a recording under a policy is harness bench's (its engine is
// internal).
package replay
