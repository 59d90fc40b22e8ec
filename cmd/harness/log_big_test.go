package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/numfmt"
	"github.com/agentharness/harness/store/sqlite"
)

// TestLogShowLargeResult: "log show" of a conversation holding a huge
// result the model saw whole (no cut, so the payload is its model copy)
// prints its size and allocates far less than the payload: it reads no
// payload. 48 MiB here (HARNESS_LOG_BIG_BYTES sets another size, such as
// 1000000000 for the probe's figure).
func TestLogShowLargeResult(t *testing.T) {
	size := 48 << 20
	if s := os.Getenv("HARNESS_LOG_BIG_BYTES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		size = n
	}
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "harness.db")
	st, err := sqlite.Open(ctx, db, &sqlite.Options{ChunkBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	res := &harness.ToolResult{CallID: "c_big", Tool: "dump", Parts: []harness.Part{harness.TextPart(strings.Repeat("x", size))}}
	res.Bytes = size
	conv := harness.NewConversation("big")
	turn := &harness.Turn{Index: 1, Input: "dump it"}
	round := &harness.Round{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: "c_big", Name: "dump"}}},
		Results: []*harness.ToolResult{res}}
	if err := st.BeginTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	if err := st.AddRound(ctx, conv, turn, round); err != nil {
		t.Fatal(err)
	}
	turn.Outcome = harness.Answered
	if err := st.EndTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	st.Close()
	res, round = nil, nil
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, errs, code := inproc(t, "log", "show", "big", "--db", db)
	runtime.ReadMemStats(&after)
	if want := numfmt.Thousands(int64(size)) + " ch"; code != 0 || !strings.Contains(out, want) {
		t.Fatalf("log show: exit %d, want %q in:\n%s%s", code, want, out, errs)
	}
	// The old log show loaded the payload (its chunks, then the whole):
	// at least twice its size.
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("log show of a %d MiB result: %d MiB allocated", size>>20, alloc>>20)
	if alloc > uint64(size)/2 {
		t.Errorf("log show allocated %d MiB for a %d MiB result, want under half of it", alloc>>20, size>>20)
	}
}
