// Package workspace provides the built-in tools an agent uses on a codebase —
// read_file, list_dir, glob, grep, write_file, edit_file and an optional
// shell — jailed to one workspace directory so that they are safe to hand to
// a model.
//
// Every path goes through the workspace's jail: relative paths are taken from
// the root, absolute ones must lie inside it, and symbolic links are
// resolved one component at a time so that a link leading outside is
// refused; device files, FIFOs and sockets are refused. Writes into .git/ or
// .harness/ are refused at any depth; .harness/ stays readable because
// spilled results are paged back from it. Every file operation then goes
// through an [os.Root] on the workspace; writes open their parent folder
// one component at a time without following links. A file with several hard
// links is read only inside the root's own .harness/ folder, known by its
// identity ([errHardLink]; [Options].AllowHardLinks for trees built of them).
//
// read_file, list_dir, glob and grep are [harness.ReadOnly]; write_file,
// edit_file and shell are [harness.Destructive]. A [Mode] decides what is
// offered and asked: [ModeReadOnly] offers only read-only tools
// ([filterByMode]), [ModeAuto] runs everything, and [ModeAsk] asks an
// approver (such as [TerminalApprover], via [ApproverFor]) before every
// Destructive or Network call, and refuses any call nobody approved, so a
// mode that asks fails closed when nobody answers.
//
// read_file pages a file by lines under [Options].ReadMaxBytes; list_dir,
// glob and grep stop at their limits and at [Options].MaxOutputBytes, and
// say so. The shell tool is not jailed, so it is off unless [Options].Shell
// is set: it runs bash -c in the root, in its own process group with stdin
// from /dev/null and a filtered environment ([Options].ShellEnv), streams
// its output ([harness.ToolResult].Stream), and kills the whole group on
// timeout, cancellation, a closed stream or bash's exit. The stream ends
// with a status line; IsError is set only when bash could not be started,
// since a non-zero status is often information.
package workspace
