package replay_test

import (
	"context"
	"fmt"
	"os"

	"github.com/agentharness/harness/replay"
)

// Import a Claude Code session dump: the main chain and the subagent it
// started are separate model contexts, each with its recorded usage.
func ExampleParseAll() {
	data, err := os.ReadFile("testdata/claude-code/subagents.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	recs, err := replay.ParseAll("subagents.json", data)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range recs {
		u := r.RecordedUsage()
		fmt.Printf("%s %s: %d calls, %d input tokens (%d cached, %d written to the cache)\n", r.Format, r.ID, r.Calls(), u.Input, u.Cached, u.CacheWrite)
	}
	// Output:
	// claude-code 666ba1ad-f06a-487c-9c1a-7b1c8d3d7ffe: 5 calls, 95774 input tokens (85420 cached, 9649 written to the cache)
	// claude-code 666ba1ad-f06a-487c-9c1a-7b1c8d3d7ffe/agent-1: 7 calls, 214416 input tokens (151307 cached, 48742 written to the cache)
}

// Supply the system prompt's size that a Codex rollout did not record;
// the caveat then names only what is still missing.
func ExampleSupply() {
	recs, _, err := replay.LoadWith(context.Background(), &replay.Supply{SystemTokens: 8_000},
		"testdata/codex/rollout-2025-11-24T12-54-04-019ab737-4612-7f91-bf54-c6a3b3870ee6.jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range recs[0].Warnings {
		fmt.Println(w)
	}
	// Output:
	// not recorded by codex: the tool schemas that every request sent (often thousands of tokens each), so every preset's figures leave them out; supply them (harness audit, bench and replay: --system-file, --tools-file or --assume-system-tokens N; in Go, replay.Supply)
	// 3 reasoning items left out (encrypted or summarised; their tokens are in the recorded usage)
	// system prompt not recorded: a stand-in of about 8000 tokens is counted in its place
}

// Import opencode's history database (read-only): each session is a
// recording, and a session that was compacted gives one per part, the
// later starting from the summary.
func ExampleLoad_opencode() {
	recs, _, err := replay.Load("testdata/opencode/opencode.db")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range recs {
		u := r.RecordedUsage()
		fmt.Printf("%s %s: %d turns, %d calls, %d input tokens (%d cached)\n", r.Format, r.ID, len(r.Turns), r.Calls(), u.Input, u.Cached)
		for _, t := range r.Turns {
			for _, c := range t.Calls {
				for i, tc := range c.Assistant.ToolCalls {
					fmt.Printf("  %s %s: %d characters shown, error %v\n", tc.ID, tc.Name, len(c.Results[i].Shown), c.Results[i].IsError)
				}
			}
		}
	}
	// Output:
	// opencode ses_dca78b79cffeZw1Z7QCsff5DAJ/part-1: 1 turns, 3 calls, 78879 input tokens (15103 cached)
	//   call_seq bash: 12150 characters shown, error false
	//   call_missing read: 70 characters shown, error true
	//   call_pkg read: 189 characters shown, error false
	// opencode ses_dca78b79cffeZw1Z7QCsff5DAJ/part-2: 2 turns, 3 calls, 23288 input tokens (11643 cached)
	//   call_ls bash: 31 characters shown, error false
}
