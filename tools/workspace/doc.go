// Package workspace provides the built-in tools an agent uses on a codebase —
// read_file, list_dir, glob, grep, write_file, edit_file and an optional
// shell — jailed to one workspace directory so that they are safe to hand to
// a model.
//
// # The jail
//
// Every path a tool receives goes through [Workspace.Resolve]: relative paths
// are taken from the workspace root, absolute paths must lie inside it, and
// symbolic links are resolved one component at a time so that a link (or a
// linked parent directory) leading outside the root is refused. Device files,
// FIFOs and sockets are refused, because reading one can block forever or
// touch hardware. Writes into .git/ or .harness/ are refused (at any depth,
// case-insensitively); .harness/ stays readable because spilled tool results
// live there and are paged back with read_file and grep.
//
// The resolver is the first line of defence; the second is that every file
// operation goes through an [os.Root] opened on the workspace, which refuses
// to leave the root even if the tree changes between the check and the use.
// Writes go further on unix: the parent folder is opened one component at a
// time without following links, and refused if it is a .git or .harness
// folder by identity, so a folder or link swapped in after the check cannot
// redirect a write into them. A regular file with several hard links is
// not read outside the root's own .harness/ folder, known by its identity
// and read through its handle ([ErrHardLink]; [Options].AllowHardLinks for
// trees built of them): another of its names may lie outside the workspace.
// write_file replaces such a name instead of writing through it.
//
// The shell tool is not jailed: a command can reach anything the process
// can. That is why it is off unless [Options].Shell is set, is Destructive,
// and runs only after approval in ask mode.
//
// # Risks and permission modes
//
// read_file, list_dir, glob and grep are [harness.ReadOnly]; write_file,
// edit_file and shell are [harness.Destructive]. A [Mode] decides what is
// offered and what is asked: [ModeReadOnly] offers only read-only tools
// ([FilterByMode]), [ModeAuto] runs everything, and [ModeAsk] asks an
// approver (such as [TerminalApprover]) before every Destructive or Network
// call; [ApproverFor] turns a mode into the agent's [harness.Approver]. In
// ModeAsk the destructive tools also refuse any call the agent's approver
// did not approve ([harness.CallInfo].Approved), so an agent built without
// an Approver cannot write: a mode that asks fails closed when nobody
// answers.
//
// # Bounded output
//
// read_file pages a file by lines and never loads it whole; each page stays
// under [Options].ReadMaxBytes so that a page of a spilled result fits the
// result ceiling. list_dir, glob and grep stop at their count limits and at
// [Options].MaxOutputBytes, and say so. shell streams its combined output
// through [harness.ToolResult].Stream so that a size-bounding guard can keep
// memory bounded however much the command prints.
//
// # The shell
//
// A shell call runs bash -c in the workspace root, in its own process
// group, with stdin from /dev/null and a filtered environment (see
// [Options].ShellEnv). The whole group is killed on timeout, when the
// call's context ends, when the stream is closed, and when bash exits (so
// nothing left in the background outlives the call). The stream ends with a
// status line such as "[exit status 2]" or "[killed: timed out after 1m30s;
// terminated by signal killed]". IsError stays false for a command that ran,
// whatever its status: a non-zero status is often information (grep without
// a match, the failing test being fixed), and the result is handed over
// before the command ends, so changing it afterwards would race with its
// reader. IsError is set only when bash could not be started.
package workspace
