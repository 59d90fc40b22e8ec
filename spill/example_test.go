package spill_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/agentharness/harness/spill"
)

func ExampleDir_Save() {
	ws, _ := os.MkdirTemp("", "ws")
	defer os.RemoveAll(ws)
	store := &spill.Dir{Workspace: ws}
	saved, err := store.Save(context.Background(),
		spill.Entry{Conversation: "c_demo", CallID: "call_1", Tool: "shell", Ext: "txt"},
		strings.NewReader(strings.Repeat("build log line\n", 1000)))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(saved.Locator, saved.Bytes)
	fmt.Println(saved.Hint)
	// Output:
	// .harness/spill/c_demo/call_1-shell.txt 15000
	// Read it with read_file on that path (offset and limit count lines) or search it with grep on that path.
}
