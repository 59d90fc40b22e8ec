package shellcmd

import "strings"

// Names are the names coding agents give their shell tool.
func Names() []string {
	return []string{"bash", "shell", "exec", "exec_command", "run_command", "shell_command", "run_shell_command", "local_shell"}
}

// IsShell reports whether name is one of Names, compared
// case-insensitively.
func IsShell(name string) bool {
	for _, s := range Names() {
		if strings.EqualFold(name, s) {
			return true
		}
	}
	return false
}
