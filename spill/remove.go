package spill

import (
	"fmt"
	"os"
	"path"
)

// RemoveConversation removes the spill folder of one conversation and
// everything in it. A conversation that never spilled is not an error.
func RemoveConversation(workspace, conversation string) error {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return fmt.Errorf("spill: opening the workspace: %w", err)
	}
	defer root.Close()
	folder := path.Join(Folder, conversationFolder(conversation))
	if err := root.RemoveAll(folder); err != nil {
		return fmt.Errorf("spill: removing %s: %w", folder, err)
	}
	return nil
}
