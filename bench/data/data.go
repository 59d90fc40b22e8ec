// Package data ships a few megabytes of real recorded agent runs, whole,
// for the benchmark's main job: six mini-swe-agent trajectories, six
// Claude Code sessions, five Codex CLI rollouts and five SWE-agent
// trajectories, chosen to span sizes and to include output-heavy runs
// (a largest result of 10,000 characters or more that is a third of all
// result characters) and light ones. Each folder keeps its source's
// licence and a SOURCE.md naming the repository, commit and files.
//
// The files are embedded, so the benchmark finds them from any working
// directory and in an installed binary.
package data

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/agentharness/harness/replay"
)

//go:embed mini-swe-agent claude-code codex swe-agent
var files embed.FS

// Agents are the agents whose runs are shipped, in the order Load
// returns them.
var agents = []string{"mini-swe-agent", "claude-code", "codex", "swe-agent"}

// Agents returns the names of the agents whose runs are shipped, in the
// order Files and Load return them.
func Agents() []string { return append([]string(nil), agents...) }

// Files lists the shipped run files of agent ("" for every agent) as
// paths into FS, sorted; licences, SOURCE.md and BLOBMAP.txt (the source
// blobs each file came from) are not listed.
func Files(agent string) []string {
	var out []string
	for _, a := range agents {
		if agent != "" && a != agent {
			continue
		}
		_ = fs.WalkDir(files, a, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && isRun(p) {
				out = append(out, p)
			}
			return nil
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return agentIndex(out[i]) < agentIndex(out[j]) })
	return out
}

// FS is the shipped files, runs, licences and SOURCE.md files, rooted so
// that each agent is a top-level folder.
func FS() fs.FS { return files }

// Load imports the shipped runs of agent ("" for every agent) with
// replay.ParseAll: every model context of every file (a Claude Code
// session's subagents are recordings of their own), Source set to
// "bench/data/" and the file's path.
func Load(ctx context.Context, agent string) ([]*replay.Recording, error) {
	var recs []*replay.Recording
	for _, p := range Files(agent) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("data: %w", err)
		}
		rs, err := replay.ParseAll("bench/data/"+p, b)
		if err != nil {
			return nil, fmt.Errorf("data: %w", err)
		}
		recs = append(recs, rs...)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("data: no shipped runs of %q (have %s)", agent, strings.Join(agents, ", "))
	}
	return recs, nil
}

func isRun(p string) bool {
	switch base := path.Base(p); {
	case strings.HasPrefix(base, "LICENSE"), base == "SOURCE.md", base == "BLOBMAP.txt", strings.HasSuffix(base, ".go"):
		return false
	}
	return true
}

func agentIndex(p string) int {
	a, _, _ := strings.Cut(p, "/")
	for i, x := range agents {
		if x == a {
			return i
		}
	}
	return len(agents)
}
