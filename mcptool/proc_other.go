//go:build !unix

package mcptool

import "os/exec"

// setProcessGroup does nothing where process groups do not exist.
func setProcessGroup(*exec.Cmd) {}

// signalGroup stops the server process itself; without process groups a
// child it spawned may outlive it.
func signalGroup(cmd *exec.Cmd, kill bool) {
	if cmd.Process == nil {
		return
	}
	_ = cmd.Process.Kill()
}
