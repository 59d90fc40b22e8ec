package spill

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkSave measures saving a 30 KiB result into a workspace that
// holds the folders of 200 conversations.
func BenchmarkSave(b *testing.B) {
	d := &Dir{Workspace: b.TempDir()}
	content := strings.Repeat("x", 30<<10)
	i := 0
	for b.Loop() {
		e := Entry{Conversation: fmt.Sprintf("conv-%d", i%200), CallID: fmt.Sprintf("call_%d", i), Tool: "Bash"}
		if _, err := d.Save(context.Background(), e, strings.NewReader(content)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
