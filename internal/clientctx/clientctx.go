// Package clientctx tells a client's context messages from a user's
// words: the user-role messages a coding agent sends beside the prompt
// (its instructions, the environment, a skill's text, a summary of a
// compressed history) that are part of a turn but not what the user typed
// (harness.Turn.Context). The replay importers ask it; it is its own
// package so the proxy, which records the same clients, can ask it too.
package clientctx

import "strings"

// Codex reports whether a message Codex recorded on the user's side is
// one Codex adds rather than the user's words: a developer (or system)
// message (sandbox permissions, collaboration mode), or a user message that
// opens as the ones Codex itself tells from a user's turn (its
// is_contextual_user_message: AGENTS.md and user instructions, the
// environment, a skill, a shell command the user ran, an interrupted turn,
// a context update, a sub-agent's notification). Codex sends each as an
// input item of its own in the same request as the prompt. In the rollouts
// that record event_msg user_message (one per prompt typed), no such event
// follows any of them, and one follows every other user message but a
// warning Codex adds between a call and its output.
func Codex(role, text string) bool {
	if role == "developer" || role == "system" {
		return true
	}
	t := strings.TrimLeft(text, " \t\r\n")
	for _, p := range []string{"# AGENTS.md instructions for ", "<user_instructions>", "<environment_context>", "<skill",
		"<user_shell_command>", "<turn_aborted>", "<context_update>", "<subagent_notification>"} {
		if len(t) >= len(p) && strings.EqualFold(t[:len(p)], p) {
			return true
		}
	}
	return false
}

// GeminiSnapshot opens the summary Gemini CLI puts in place of the
// history it compressed, as a user message.
const GeminiSnapshot = "<state_snapshot>"

// Gemini reports whether a user content's text is one Gemini CLI adds
// rather than the user's words: the session context it sends first (the
// date, the system, the workspace's folders: "<session_context>", or in
// older versions the bare "This is the Gemini CLI. We are setting up the
// context for our chat."), the summary it puts in place of a compressed
// history (GeminiSnapshot), or the editor's context it sends before a
// prompt when an IDE is connected. Gemini CLI sends each as a Content of
// its own in the same request as the prompt.
func Gemini(text string) bool {
	t := strings.TrimLeft(text, " \t\r\n")
	for _, p := range []string{"<session_context>", "This is the Gemini CLI. We are setting up the context for our chat.", GeminiSnapshot,
		"Here is the user's editor context", "Here is a summary of changes in the user's editor context"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// ClaudeCode reports whether a text block of a user message is one Claude
// Code adds rather than the user's words: a "<system-reminder>" block (the
// date and the project's CLAUDE.md it sends before the first prompt, as a
// block of the prompt's own message; Claude Code does not write these to
// its session history; a reminder it appends to a tool result is part of
// that result, not a block of its own), or the record of a slash command
// the user ran in the terminal ("<local-command-caveat>", the
// "<command-name>" message, its "<local-command-stdout>" and
// "<local-command-stderr>"), which Claude Code sends with the caveat that
// the model should not answer it.
func ClaudeCode(text string) bool {
	t := strings.TrimLeft(text, " \t\r\n")
	for _, p := range []string{"<system-reminder>", "<local-command-caveat>", "<command-name>", "<local-command-stdout>", "<local-command-stderr>"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}
