package workspace

import (
	"fmt"
	"path"
	"strings"
)

const (
	// maxBraceExpansions bounds how many patterns one {a,b} pattern expands
	// to.
	maxBraceExpansions = 256
	// maxDoubleStars bounds "**" segments per pattern: matching is
	// exponential in their number.
	maxDoubleStars = 6
)

// globMatcher matches slash-separated relative paths against a pattern in
// the usual shell syntax: * ? [abc] within one path segment, ** for any
// number of segments (zero included), {a,b} alternatives.
type globMatcher struct {
	alts [][]string // the brace-expanded patterns, split into segments
	deep bool       // some alternative has "**"
	max  int        // most segments of any alternative (meaningful when !deep)
}

// compileGlob parses pattern. It fails on a malformed pattern ("[" without
// "]", unbalanced braces) and on patterns that would take too long.
func compileGlob(pattern string) (*globMatcher, error) {
	if pattern == "" {
		return nil, fmt.Errorf("empty pattern")
	}
	alts, err := expandBraces(pattern)
	if err != nil {
		return nil, err
	}
	m := &globMatcher{}
	for _, a := range alts {
		segs := strings.Split(strings.Trim(a, "/"), "/")
		stars := 0
		for _, s := range segs {
			if s == "**" {
				stars++
				m.deep = true
				continue
			}
			if _, err := path.Match(s, ""); err != nil {
				return nil, fmt.Errorf("bad pattern %q: %v", pattern, err)
			}
		}
		if stars > maxDoubleStars {
			return nil, fmt.Errorf("pattern %q has more than %d ** segments", pattern, maxDoubleStars)
		}
		m.max = max(m.max, len(segs))
		m.alts = append(m.alts, segs)
	}
	return m, nil
}

// match reports whether the relative slash path name matches.
func (m *globMatcher) match(name string) bool {
	n := strings.Split(name, "/")
	for _, a := range m.alts {
		if matchSegments(a, n) {
			return true
		}
	}
	return false
}

// mayDescend reports whether a directory at depth (segments below the base)
// can contain matches.
func (m *globMatcher) mayDescend(depth int) bool { return m.deep || depth < m.max }

func matchSegments(p, n []string) bool {
	for len(p) > 0 {
		if p[0] == "**" {
			for len(p) > 0 && p[0] == "**" {
				p = p[1:]
			}
			if len(p) == 0 {
				return true
			}
			for i := 0; i <= len(n); i++ {
				if matchSegments(p, n[i:]) {
					return true
				}
			}
			return false
		}
		if len(n) == 0 {
			return false
		}
		if ok, _ := path.Match(p[0], n[0]); !ok {
			return false
		}
		p, n = p[1:], n[1:]
	}
	return len(n) == 0
}

// expandBraces expands {a,b} groups (nested ones too) into every
// alternative.
func expandBraces(p string) ([]string, error) {
	open := strings.IndexByte(p, '{')
	if open < 0 {
		if strings.IndexByte(p, '}') >= 0 {
			return nil, fmt.Errorf("bad pattern %q: '}' without '{'", p)
		}
		return []string{p}, nil
	}
	depth, close := 0, -1
	var commas []int
	for i := open; i < len(p) && close < 0; i++ {
		switch p[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				close = i
			}
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		}
	}
	if close < 0 {
		return nil, fmt.Errorf("bad pattern %q: '{' without '}'", p)
	}
	var parts []string
	prev := open + 1
	for _, c := range commas {
		parts = append(parts, p[prev:c])
		prev = c + 1
	}
	parts = append(parts, p[prev:close])
	var out []string
	for _, part := range parts {
		rest, err := expandBraces(p[:open] + part + p[close+1:])
		if err != nil {
			return nil, err
		}
		out = append(out, rest...)
		if len(out) > maxBraceExpansions {
			return nil, fmt.Errorf("pattern %q expands to more than %d alternatives", p, maxBraceExpansions)
		}
	}
	return out, nil
}

// staticPrefix returns the leading segments of pattern that contain no
// pattern syntax, joined, and the rest of the pattern. Walking starts at the
// prefix, so "src/**/*.go" never visits docs/.
func staticPrefix(pattern string) (prefix, rest string) {
	segs := strings.Split(pattern, "/")
	i := 0
	for ; i < len(segs)-1; i++ {
		if strings.ContainsAny(segs[i], "*?[{\\") {
			break
		}
	}
	return strings.Join(segs[:i], "/"), strings.Join(segs[i:], "/")
}
