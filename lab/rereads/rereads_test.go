// Package rereads attributes the re-reads the bench prices (replay.Recovery)
// to the cut that hid each needle, and sets them against what the cut saved.
package rereads

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/replay"
	"github.com/agentharness/harness/tokens"
)

// cell sums, for one kind of cut, what it saved and what its re-reads cost
// (openai price: cached 0.1, uncached 1, output 4; chars/4 tokens).
type cell struct {
	results, rounds, needles int
	saved, reread            float64
}

// kindOf names how result r was cut at arrival, by tool and size.
func kindOf(r replay.ResultStat) string {
	tool := strings.ToLower(r.Tool)
	k := "other"
	switch {
	case strings.Contains(tool, "read") || tool == "view":
		k = "read"
	case strings.Contains(tool, "bash") || strings.Contains(tool, "shell") || strings.Contains(tool, "exec"):
		k = "shell"
	case strings.Contains(tool, "grep") || strings.Contains(tool, "glob") || strings.Contains(tool, "search"):
		k = "search"
	case strings.HasPrefix(tool, "mcp"):
		k = "mcp"
	}
	if k == "shell" {
		k = "sh:" + shellVerb(r.Args)
	}
	if r.State == "spilled" {
		switch {
		case r.FullChars < 32<<10:
			k += "<32k"
		case r.FullChars < 64<<10:
			k += "<64k"
		default:
			k += ">64k"
		}
	}
	return k
}

// shellVerb is the first program of a shell call's command that is not
// cd, a variable or a wrapper.
func shellVerb(args string) string {
	a := args
	for _, key := range []string{"-lc\",\"", "\"command\":\"", "\"cmd\":\""} {
		if i := strings.Index(a, key); i >= 0 {
			a = a[i+len(key):]
			break
		}
	}
	for _, part := range strings.FieldsFunc(a, func(r rune) bool { return r == '&' || r == ';' || r == '|' }) {
		f := strings.Fields(part)
		if len(f) == 0 || f[0] == "cd" {
			continue
		}
		v := strings.Trim(f[0], "\"'")
		switch v {
		case "cat", "sed", "head", "tail", "nl", "less", "awk":
			return "file"
		case "rg", "grep", "find", "ls", "fd", "tree":
			return "search"
		case "git":
			return "git"
		}
		return "run"
	}
	return "?"
}

// TestResearchRereads prints, per set of HARNESS_RESEARCH_SETS, the
// re-reads of HARNESS_PRESET (default harness) by the state of the result
// at the request that used the needle and the tool kind.
func TestResearchRereads(t *testing.T) {
	sets := os.Getenv("HARNESS_RESEARCH_SETS")
	if sets == "" {
		t.Skip("HARNESS_RESEARCH_SETS not set")
	}
	name := os.Getenv("HARNESS_PRESET")
	if name == "" {
		name = "harness"
	}
	p, err := bench.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	none, _ := bench.Lookup("none")
	ctx := context.Background()
	bpe, err := tokens.O200k()
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range filepath.SplitList(sets) {
		cells := map[string]*cell{}
		get := func(k string) *cell {
			if cells[k] == nil {
				cells[k] = &cell{}
			}
			return cells[k]
		}
		var runs []string
		_, err := replay.LoadEach(ctx, nil, []string{set}, func(rec *replay.Recording) error {
			counter := tokens.NewCache(bpe, nil)
			needles := replay.Needles(rec)
			opts := &replay.Options{Counter: counter, Needles: needles, CacheTTL: 5 * time.Minute}
			rn, err := replay.Replay(ctx, rec, none.Policy(), opts)
			if err != nil {
				return err
			}
			rp, err := replay.Replay(ctx, rec, p.Policy(), opts)
			if err != nil {
				return err
			}
			hidden := map[string]bool{}
			for _, r := range rn.Recoveries {
				for _, n := range r.Needles {
					hidden[n] = true
				}
			}
			callOf := map[string]string{}
			for _, n := range needles {
				if _, ok := callOf[n.Text]; !ok {
					callOf[n.Text] = n.CallID
				}
			}
			res := map[string]replay.ResultStat{}
			for _, r := range rp.Results {
				res[r.CallID] = r
			}
			// state of each result in each request
			stateAt := func(at int, id string) string {
				if at >= len(rp.Calls) {
					return "?"
				}
				for _, s := range rp.Calls[at].Shown {
					if s.CallID == id {
						return s.State
					}
				}
				return "absent"
			}
			// savings: per request, (full − shown) chars of each tool message.
			savedBy := map[string]float64{}
			for _, c := range rp.Calls {
				for _, s := range c.Shown {
					r := res[s.CallID]
					if d := r.FullChars - s.Chars; d > 0 {
						savedBy[s.CallID] += 0.1 * float64(d) / 4
					}
				}
			}
			keyOf := func(id string, at int) string {
				r := res[id]
				arr := r.State
				if arr == "" {
					arr = "whole"
				}
				return fmt.Sprintf("%s/%s@%s", kindOf(r), arr, stateAt(at, id))
			}
			for id, s := range savedBy {
				c := get(fmt.Sprintf("%s/%s", kindOf(res[id]), res[id].State))
				c.results++
				c.saved += s
			}
			total := 0.0
			for _, c := range rn.Calls {
				total += float64(c.Input-c.Cached) + 0.1*float64(c.Cached) + 4*float64(c.Output)
			}
			runRe := 0.0
			for _, rc := range rp.Recoveries {
				var ids []string
				seen := map[string]bool{}
				for _, n := range rc.Needles {
					if hidden[n] {
						continue
					}
					id := callOf[n]
					if !seen[id] {
						seen[id] = true
						ids = append(ids, id)
					}
				}
				if len(ids) == 0 {
					continue
				}
				later := len(rp.Calls) - rc.At
				cost := 0.0
				if rc.At < len(rp.Calls) {
					c := rp.Calls[rc.At]
					cost = 0.1*float64(c.Input) + 4*float64(rc.Output) + float64(rc.Added)*(1+0.1*float64(later))
				}
				runRe += cost
				if f := os.Getenv("HARNESS_RUN"); f != "" && strings.Contains(rec.ID, f) {
					for _, id := range ids {
						r := res[id]
						t.Logf("  round before request %d/%d (cost≈%.0f, added %d tok): %s %.80s full %d shown %d state %s@%s, arrived turn %d round %d; needles %v", rc.At, len(rp.Calls), cost, rc.Added, r.Tool, r.Args, r.FullChars, r.ShownChars, r.State, stateAt(rc.At, id), r.Turn, r.Round, rc.Needles)
					}
				}
				for _, id := range ids {
					c := get("re:" + keyOf(id, rc.At))
					c.rounds++
					c.reread += cost / float64(len(ids))
				}
			}
			saved := 0.0
			for _, s := range savedBy {
				saved += s
			}
			runs = append(runs, fmt.Sprintf("%-40s calls %4d none %9.0f saved≈%8.0f rereads %3d cost≈%8.0f (%.3f of none)", rec.ID, len(rp.Calls), total, saved, len(rp.Recoveries), runRe, runRe/total))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for k := range cells {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t.Logf("set %s preset %s", set, name)
		for _, k := range keys {
			c := cells[k]
			t.Logf("%-36s results %4d saved≈%10.0f | rounds %4d reread≈%10.0f", k, c.results, c.saved, c.rounds, c.reread)
		}
		if os.Getenv("HARNESS_PER_RUN") != "" {
			for _, r := range runs {
				t.Log(r)
			}
		}
	}
}
