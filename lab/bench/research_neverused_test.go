package benchlab

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/agentharness/harness/internal/replayengine"
)

// neverKeys are the buckets of TestResearchAttribution's "never used"
// table a result the agent never used falls in: the command that made it
// (cmd …), its size band (band …), how many requests show it after its
// arrival (life …), its fate under the preset (fate …: whole to the end,
// cut at arrival, cleared for cost or by the window) and whether a
// clear of it alone could repay its cache miss (own clear …): the best
// request k at least 4 after its arrival where 0.1 × its tokens × the
// requests left covers 0.9 × the tokens the miss re-sends (the request's
// input less the input of its arrival's, the prefix up to it), the
// char-weighted openai-like payback of a clear with hindsight of the
// run's end.
func neverKeys(r *attrResult, calls []replayengine.CallStat, pr *attrProbe) []string {
	f := utf8.RuneCountInString(r.full)
	life := len(calls) - 1 - r.arrival
	keys := []string{"cmd " + shellCommand(r.tool, r.args), "band " + sizeBand(f), "life " + lifeBand(life)}
	switch {
	case r.cleared >= 0:
		keys = append(keys, "fate cleared: "+pr.stageOf(r.turn, r.round))
	case r.state != "" && r.state != "whole":
		keys = append(keys, "fate cut at arrival: "+r.state)
	default:
		keys = append(keys, "fate whole to the end", "whole: "+keys[0], "whole: "+keys[1])
	}
	ft, best := float64(f)/4, -1.0
	if idx := realCalls(calls); r.arrival < len(calls) {
		in := float64(calls[r.arrival].Input)
		for k := r.arrival + 4; k < len(calls); k++ {
			if calls[k].Index == 0 {
				continue
			}
			left := float64(idx[len(idx)-1] - calls[k].Index)
			resent := float64(calls[k].Input) - in
			if resent <= 0 {
				continue
			}
			best = max(best, 0.1*ft*left/(0.9*resent))
		}
	}
	switch {
	case best < 0:
		keys = append(keys, "own clear: no request 4 after")
	case best >= 1:
		keys = append(keys, "own clear: repays")
	case best >= 0.5:
		keys = append(keys, "own clear: repays 50-100%")
	case best >= 0.2:
		keys = append(keys, "own clear: repays 20-50%")
	default:
		keys = append(keys, "own clear: repays < 20%")
	}
	return keys
}

// realCalls is the Index of each recorded request of calls.
func realCalls(calls []replayengine.CallStat) []int {
	var out []int
	for _, c := range calls {
		if c.Index > 0 {
			out = append(out, c.Index)
		}
	}
	if len(out) == 0 {
		out = []int{0}
	}
	return out
}

// lifeBand names the band of the requests a result is shown after its
// arrival.
func lifeBand(n int) string {
	switch {
	case n < 5:
		return "a 0-4"
	case n < 10:
		return "b 5-9"
	case n < 20:
		return "c 10-19"
	case n < 40:
		return "d 20-39"
	}
	return "e 40+"
}

// shellCommand names a shell call by its program, finer than callKind:
// sed -n (a range print) apart from sed -i, python running a script, a
// module (-m pytest) or inline code (-c, a heredoc), git by its
// subcommand; a pipeline by its first program. A non-shell tool is its
// name.
func shellCommand(tool, args string) string {
	var a struct {
		Command any `json:"command"`
		Cmd     any `json:"cmd"`
	}
	_ = json.Unmarshal([]byte(args), &a)
	cmd := ""
	switch {
	case a.Command != nil:
		cmd = fmt.Sprint(a.Command)
	case a.Cmd != nil:
		cmd = fmt.Sprint(a.Cmd)
	default:
		return "tool " + strings.ToLower(tool)
	}
	for _, seg := range strings.FieldsFunc(strings.Trim(cmd, "[]"), func(r rune) bool { return r == '|' || r == ';' || r == '&' || r == '\n' }) {
		f := strings.Fields(seg)
		for len(f) > 0 && (f[0] == "cd" || strings.Contains(f[0], "=") || f[0] == "bash" || f[0] == "-lc" || f[0] == "timeout" || f[0] == "echo") {
			if f[0] == "cd" && len(f) > 1 {
				f = f[2:]
				continue
			}
			if f[0] == "echo" {
				f = nil
				break
			}
			f = f[1:]
		}
		if len(f) == 0 {
			continue
		}
		p := filepath.Base(strings.Trim(f[0], `"'`))
		next := ""
		if len(f) > 1 {
			next = f[1]
		}
		switch {
		case p == "sed" && strings.HasPrefix(next, "-n"):
			return "sed -n"
		case p == "sed":
			return "sed (edit)"
		case strings.HasPrefix(p, "python"):
			switch {
			case next == "-m" && len(f) > 2:
				return "python -m " + f[2]
			case next == "-c" || strings.HasPrefix(next, "<<"):
				return "python -c / heredoc"
			case strings.HasSuffix(next, ".py"):
				if strings.Contains(next, "test") {
					return "python test_*.py"
				}
				return "python script.py"
			}
			return "python other"
		case p == "git":
			return "git " + next
		case p == "cat" && strings.HasPrefix(next, "<<"), p == "cat" && strings.HasPrefix(next, ">"):
			return "cat > (write)"
		}
		return p
	}
	return "(none)"
}

// cmdBand is shellCommand with "≥1k" for a result of at least 1,000
// characters.
func cmdBand(tool, args string, n int) string {
	if n >= 1_000 {
		return shellCommand(tool, args) + " ≥1k"
	}
	return shellCommand(tool, args) + " <1k"
}

type ageKey struct {
	key  string
	cost float64
}

// unquotedKeys buckets what r still costs A requests after its arrival
// (A = 4, 8, 16, 32; see attribution.Unquoted): "used by then" when one of
// its needles was used at or before that request, else "unused by then,
// used later" or "unused by then, never used". A result shown to fewer
// than A more requests is in none.
func unquotedKeys(r *attrResult, total int) []ageKey {
	var out []ageKey
	f := float64(utf8.RuneCountInString(r.full))
	for _, age := range []int{4, 8, 16, 32} {
		at := r.arrival + age
		if at >= total {
			continue
		}
		by, later := false, false
		for _, u := range r.uses {
			by = by || u <= at
			later = later || u > at
		}
		k := "used by then"
		switch {
		case !by && later:
			k = "unused by then, used later"
		case !by:
			k = "unused by then, never used"
		}
		out = append(out, ageKey{fmt.Sprintf("age %2d: %s", age, k), 0.1 * f * float64(total-1-at)})
	}
	return out
}
