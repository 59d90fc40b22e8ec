// Package spill keeps tool results that are too large to show a model in
// full, so that nothing a guard cuts is lost.
//
// A [Store] saves content and answers with a locator (where it is), its size
// and a retrieval hint (how to read it back) — the storage seam of DeepSeek
// Harness's spill family. [Dir] is the implementation the agent uses by
// default: it writes under <workspace>/.harness/spill/<conversation>/, which
// lies inside the workspace jail, so the agent pages a spilled result with
// the file tools it already has (read_file with offset/limit, grep on the
// path). Folders are created 0700 and files 0600, exclusively (a file is
// never overwritten), every name is sanitised, and every file operation goes
// through an [os.Root] so a symbolic link cannot lead a write out of the
// workspace.
//
// Spill files are kept until removed: "harness spill gc --older-than 7d"
// deletes those older than a duration, and [RemoveConversation]
// deletes one conversation's folder when the conversation is deleted.
package spill
