package replayengine

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/agentharness/harness/replay"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
)

// recoveryRecording is one turn: call_1 runs command and returns a log
// of 1,000 lines in which line i holds "needle<i>XYZ" for each i of
// lines, then one call per entry of uses writes those needles in its
// command (each call answered "ok"), then a final answer.
func recoveryRecording(command string, lines []int, uses ...[]int) *replay.Recording {
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, "line %04d: nothing to see here, just ordinary log output of a build\n", i)
	}
	log := b.String()
	for _, l := range lines {
		old := fmt.Sprintf("line %04d: nothing", l)
		log = strings.Replace(log, old, fmt.Sprintf("line %04d: needle%dXYZ", l, l), 1)
	}
	bash := harness.ToolSpec{Name: "bash", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)}
	call := func(id, cmd string, out string) *replay.Call {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		return &replay.Call{Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: id, Name: "bash", Args: args}}},
			Results: []*replay.Result{{CallID: id, Tool: "bash", Full: []harness.Part{harness.TextPart(out)}}}, Usage: harness.Usage{Output: 20}, HasUsage: true}
	}
	calls := []*replay.Call{call("call_1", command, log)}
	for k, u := range uses {
		var words []string
		for _, l := range u {
			words = append(words, fmt.Sprintf("needle%dXYZ", l))
		}
		calls = append(calls, call(fmt.Sprintf("use_%d", k), "echo "+strings.Join(words, " "), "ok"))
	}
	calls = append(calls, &replay.Call{Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("done")}}, Final: true})
	return &replay.Recording{ID: "recovery", Format: "builtin", System: "You are a coding agent.", Tools: []harness.ToolSpec{bash},
		Turns: []*replay.Turn{{Input: "find the needles", Calls: calls}}}
}

// clearOld is a view policy that empties call_1's result once a later
// result is in the view: a cut that keeps no copy.
var clearOld = harness.ViewPolicyFunc(func(_ context.Context, v *harness.View) error {
	later := false
	for i := len(v.Messages) - 1; i >= 0; i-- {
		m := &v.Messages[i]
		if m.Role != harness.RoleTool {
			continue
		}
		if m.ToolCallID == "call_1" && later {
			m.Parts = []harness.Part{harness.TextPart("[cleared]")}
		}
		later = true
	}
	return nil
})

// TestReplayPricesRecovery: before a request that uses a needle it no
// longer shows, the replay adds the round a live agent would make to read
// it back, by the path the policy leaves: a page of the spill file, the
// recall tool, the read-only call run again (whole when its cut at
// arrival showed the needle, narrowed to a page when it did not), or
// nothing (lost) when the call was not read-only; a visible needle costs
// nothing, and needles whose pages touch are read by one call.
func TestReplayPricesRecovery(t *testing.T) {
	spill := Config{Guards: []harness.Guard{(&guard.ResultPolicy{MaxBytes: 4 << 10, Preview: guard.HeadTail{}}).Guard()}}
	for _, c := range []struct {
		name    string
		command string
		cfg     Config
		lines   []int
		uses    [][]int
		// rounds lists each recovery round's calls by how they read;
		// unrecovered counts the needles lost.
		rounds      []map[string]int
		unrecovered int
	}{
		{name: "visible", command: "cat build.log", lines: []int{500}, uses: [][]int{{500}}},
		{name: "spilled", command: "cat build.log", cfg: spill, lines: []int{500}, uses: [][]int{{500}},
			rounds: []map[string]int{{"spill": 1}}},
		{name: "two adjacent needles, one read", command: "cat build.log", cfg: spill, lines: []int{500, 510}, uses: [][]int{{500, 510}},
			rounds: []map[string]int{{"spill": 1}}},
		{name: "two distant needles, two reads of one round", command: "cat build.log", cfg: spill, lines: []int{300, 700}, uses: [][]int{{300, 700}},
			rounds: []map[string]int{{"spill": 2}}},
		{name: "a page read back stays: a later use of a needle on it is free", command: "cat build.log", cfg: spill, lines: []int{500, 505}, uses: [][]int{{500}, {505}},
			rounds: []map[string]int{{"spill": 1}}},
		{name: "recalled from the store", command: "cat build.log", cfg: Config{Guards: []harness.Guard{headGuard(4<<10, true)}, Recall: true}, lines: []int{500}, uses: [][]int{{500}},
			rounds: []map[string]int{{"recall": 1}}},
		{name: "no copy, read-only: run again and narrowed", command: "cat build.log", cfg: Config{Guards: []harness.Guard{headGuard(4<<10, false)}}, lines: []int{500}, uses: [][]int{{500}},
			rounds: []map[string]int{{"rerun": 1}}},
		{name: "cleared, read-only: run again whole", command: "grep -n needle build.log", cfg: Config{Policies: []harness.ViewPolicy{clearOld}}, lines: []int{20}, uses: [][]int{{}, {20}},
			rounds: []map[string]int{{"rerun": 1}}},
		{name: "no copy, not read-only: lost", command: "python build.py", cfg: Config{Guards: []harness.Guard{headGuard(4<<10, false)}}, lines: []int{500}, uses: [][]int{{500}},
			unrecovered: 1},
	} {
		for _, send := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/send=%v", c.name, send), func(t *testing.T) {
				c.cfg.SendRecoveries = send
				replayPricesRecovery(t, c.command, c.cfg, c.lines, c.uses, c.rounds, c.unrecovered)
			})
		}
	}
}

// replayPricesRecovery is a case of TestReplayPricesRecovery.
func replayPricesRecovery(t *testing.T, command string, cfg Config, lines []int, uses [][]int, rounds []map[string]int, unrecovered int) {
	rec := recoveryRecording(command, lines, uses...)
	rep, err := Replay(context.Background(), rec, policy(t.Name(), cfg), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Needles != len(lines) {
		t.Fatalf("%d needles, want %d", rep.Needles, len(lines))
	}
	if len(rep.Recoveries) != len(rounds) || len(rep.Unrecovered) != unrecovered {
		t.Fatalf("%d recovery rounds %+v, %d unrecovered; want %d rounds, %d unrecovered", len(rep.Recoveries), rep.Recoveries, len(rep.Unrecovered), len(rounds), unrecovered)
	}
	for i, r := range rep.Recoveries {
		if fmt.Sprint(r.Via) != fmt.Sprint(rounds[i]) {
			t.Errorf("round %d reads %v, want %v", i, r.Via, rounds[i])
		}
		// The round precedes the request of the call that used the
		// needle; its calls are output, its calls and results added.
		if r.At <= 0 || r.At >= len(rep.Calls) || r.Output <= 0 || r.Added <= r.Output {
			t.Errorf("round %d: %+v of %d requests", i, r, len(rep.Calls))
		}
	}
	if !cfg.SendRecoveries {
		if n := len(rep.Calls); n != rec.Calls() {
			t.Errorf("%d requests: a recovery round is priced by the bench, not sent", n)
		}
		return
	}
	// Each round is sent: one more request (Index 0) before the call's,
	// which carries the round's calls and pages.
	if n := len(rep.Calls); n != rec.Calls()+len(rounds) {
		t.Errorf("%d requests of %d recorded and %d rounds", n, rec.Calls(), len(rounds))
	}
	for _, r := range rep.Recoveries {
		round, next := rep.Calls[r.At], rep.Calls[r.At+1]
		if !r.Sent || round.Index != 0 || round.Output != r.Output || next.Input < round.Input+r.Added-r.Output {
			t.Errorf("round %+v: its request %+v, the next %+v", r, round, next)
		}
	}
}

// TestRecoveryPages: a read returns the needle's line and its context
// lines, and needles whose pages touch share one page.
func TestRecoveryPages(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "%03d\n", i) // 4 bytes a line
	}
	src := b.String()
	at := func(line int) int { return 4 * line }
	for _, c := range []struct {
		name    string
		offsets []int
		limit   int
		want    [][2]int
	}{
		{"one needle", []int{at(100)}, 0, [][2]int{{at(80), at(121)}}},
		{"at the start", []int{at(3)}, 0, [][2]int{{0, at(24)}}},
		{"at the end", []int{at(195)}, 0, [][2]int{{at(175), len(src)}}},
		{"adjacent", []int{at(100), at(130)}, 0, [][2]int{{at(80), at(151)}}},
		{"apart", []int{at(40), at(150)}, 0, [][2]int{{at(20), at(61)}, {at(130), at(171)}}},
		{"limited", []int{at(100)}, 40, [][2]int{{at(100) - 20, at(100) + 20}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &recoveryRead{source: src, offsets: c.offsets, limit: c.limit}
			if got := r.pages(); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("pages %v, want %v", got, c.want)
			}
		})
	}
}

// FuzzRecoveryPages: every page lies within the source, is no longer
// than the limit, and every needle offset is on a page, for any text and
// offsets.
func FuzzRecoveryPages(f *testing.F) {
	f.Add("a\nb\nc\n", 2, 4, 0)
	f.Add(strings.Repeat("line of text\n", 300), 1300, 2600, 0)
	f.Add(strings.Repeat("x", 50000), 100, 40000, 20000)
	f.Add("no newline at all", 3, 3, 5)
	f.Fuzz(func(t *testing.T, src string, a, b, limit int) {
		if len(src) == 0 || limit < 0 || limit > 1<<20 {
			return
		}
		a, b = abs(a)%len(src), abs(b)%len(src)
		r := &recoveryRead{source: src, offsets: []int{a, b}, limit: limit}
		max := limit
		if max == 0 {
			max = recoveryPageBytes
		}
		pages := r.pages()
		for _, o := range []int{a, b} {
			on := false
			for _, p := range pages {
				if p[0] < 0 || p[1] > len(src) || p[0] > p[1] || p[1]-p[0] > max {
					t.Fatalf("page %v of %d bytes, limit %d", p, len(src), max)
				}
				on = on || (p[0] <= o && o < p[1]) || (p[0] == p[1] && o == p[0])
			}
			if !on && max > 1 {
				t.Fatalf("offset %d on no page of %v (limit %d)", o, pages, max)
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n {
			return 0
		}
		return -n
	}
	return n
}

// clearAllButNewest clears every result but the newest once the view
// holds three, as compaction does: a placeholder and a cleared cut.
var clearAllButNewest = harness.ViewPolicyFunc(func(_ context.Context, v *harness.View) error {
	var tools []int
	for i, m := range v.Messages {
		if m.Role == harness.RoleTool {
			tools = append(tools, i)
		}
	}
	if len(tools) < 3 {
		return nil
	}
	for _, i := range tools[:len(tools)-1] {
		v.Messages[i].Parts = []harness.Part{harness.TextPart("[result cleared]")}
		v.Origins[i].Cuts = append(v.Origins[i].Cuts, harness.Cut{Kind: harness.CutCleared})
	}
	return nil
})

// TestReplayForgetsClearedRounds: a recovery round is a round of the
// conversation, so a policy that clears the results after it clears it
// too: from that request it adds its calls and a placeholder per page,
// and a needle its page held needs a round again. A policy that keeps
// the results after the round keeps the page (one round).
func TestReplayForgetsClearedRounds(t *testing.T) {
	spill := (&guard.ResultPolicy{MaxBytes: 4 << 10, Preview: guard.HeadTail{}}).Guard()
	rec := recoveryRecording("cat build.log", []int{500, 505}, []int{500}, nil, []int{505})
	for _, c := range []struct {
		name    string
		cfg     Config
		rounds  int
		cleared int // Report.Calls index at which round 0 is cleared (0: never)
	}{
		{"kept", Config{Guards: []harness.Guard{spill}}, 1, 0},
		{"cleared", Config{Guards: []harness.Guard{spill}, Policies: []harness.ViewPolicy{clearAllButNewest}}, 2, 3},
		// Sent, the round is in the conversation: the policy clears its
		// page itself, and the needle is read again.
		{"kept, sent", Config{Guards: []harness.Guard{spill}, SendRecoveries: true}, 1, 0},
		{"cleared, sent", Config{Guards: []harness.Guard{spill}, Policies: []harness.ViewPolicy{clearAllButNewest}, SendRecoveries: true}, 2, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := Replay(context.Background(), rec, policy(c.name, c.cfg), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Recoveries) != c.rounds {
				t.Fatalf("%d recovery rounds %+v, want %d", len(rep.Recoveries), rep.Recoveries, c.rounds)
			}
			for i, r := range rep.Recoveries {
				if r.Sent != c.cfg.SendRecoveries {
					t.Errorf("round %d sent %v", i, r.Sent)
				}
			}
			r := rep.Recoveries[0]
			if r.Cleared != c.cleared {
				t.Errorf("round 0 cleared at request %d, want %d", r.Cleared, c.cleared)
			}
			if c.cleared > 0 && (r.Kept <= r.Output || r.Kept >= r.Added) {
				t.Errorf("round 0 keeps %d tokens once cleared: want more than its calls (%d), less than all (%d)", r.Kept, r.Output, r.Added)
			}
		})
	}
}
