// Package shellcmd classifies the calls coding agents make to their shell
// tool: which tool names are a shell ([IsShell]), whether a call's command
// runs a program whose output is a log ([RunsProgram]), whether it starts
// with a search, a listing or git ([Lists]) and whether it only
// reads ([ReadOnly]). The guards, the importers and the bench all ask it, so
// they agree on what a command does.
package shellcmd
