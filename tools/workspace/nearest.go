package workspace

import (
	"slices"
	"strings"
)

const (
	// maxNearestWork bounds the line comparisons edit_file spends looking
	// for text close to an old_string that was not found.
	maxNearestWork = 4_000_000
	// minSimilarity is the least similarity worth showing as a candidate.
	minSimilarity = 0.5
)

// candidate is a span of the file close to an old_string that was not
// found.
type candidate struct {
	first, last int     // 1-based line numbers
	score       float64 // similarity, 0..1
	whitespace  bool    // equal once runs of white space are ignored
}

// nearest returns up to n non-overlapping spans of lines (same number of
// lines as old) most similar to old, best first. First it looks for spans
// equal to old but for white space (the usual failure: indentation); if
// there are none, it scores every span by the Dice coefficient of byte
// bigrams, line against line. ok is false when the file is too large for
// the search within maxNearestWork comparisons.
func nearest(fileLines []string, old string, n int) (cands []candidate, ok bool) {
	oldLines := strings.Split(strings.TrimSuffix(old, "\n"), "\n")
	k := len(oldLines)
	if k == 0 || len(fileLines) < k {
		return nil, true
	}
	spans := len(fileLines) - k + 1
	if spans*k > maxNearestWork {
		return nil, false
	}
	if cands := sameButSpace(fileLines, oldLines, n); len(cands) > 0 {
		return cands, true
	}
	return similar(fileLines, oldLines, n), true
}

// sameButSpace returns up to n non-overlapping spans of fileLines equal to
// oldLines once runs of white space are ignored, first to last.
func sameButSpace(fileLines, oldLines []string, n int) []candidate {
	k := len(oldLines)
	normOld := make([]string, k)
	for i, l := range oldLines {
		normOld[i] = strings.Join(strings.Fields(l), " ")
	}
	normFile := make([]string, len(fileLines))
	for i, l := range fileLines {
		normFile[i] = strings.Join(strings.Fields(l), " ")
	}
	var cands []candidate
	for s := 0; s+k <= len(fileLines) && len(cands) < n; s++ {
		same := true
		for j := 0; j < k && same; j++ {
			same = normFile[s+j] == normOld[j]
		}
		if same {
			cands = append(cands, candidate{first: s + 1, last: s + k, score: 1, whitespace: true})
			s += k - 1
		}
	}
	return cands
}

// spanScore is the similarity of the span of lines starting at start.
type spanScore struct {
	start int
	score float64
}

// similar returns up to n non-overlapping spans of fileLines scoring at
// least minSimilarity against oldLines (the Dice coefficient of byte
// bigrams, line against line), best first.
func similar(fileLines, oldLines []string, n int) []candidate {
	k := len(oldLines)
	oldGrams := make([][]uint16, k)
	for i, l := range oldLines {
		oldGrams[i] = bigrams(l)
	}
	fileGrams := make([][]uint16, len(fileLines))
	for i, l := range fileLines {
		fileGrams[i] = bigrams(l)
	}
	var all []spanScore
	for s := 0; s+k <= len(fileLines); s++ {
		inter, sum := 0, 0
		for j := 0; j < k; j++ {
			a, b := fileGrams[s+j], oldGrams[j]
			if len(a) == 0 && len(b) == 0 {
				inter, sum = inter+1, sum+2 // two blank lines agree
				continue
			}
			inter += common(a, b)
			sum += len(a) + len(b)
		}
		if sum > 0 {
			if sc := 2 * float64(inter) / float64(sum); sc >= minSimilarity {
				all = append(all, spanScore{s, sc})
			}
		}
	}
	slices.SortStableFunc(all, func(x, y spanScore) int {
		switch {
		case x.score > y.score:
			return -1
		case x.score < y.score:
			return 1
		}
		return x.start - y.start
	})
	var cands []candidate
	for _, c := range all {
		if len(cands) == n {
			break
		}
		overlaps := false
		for _, p := range cands {
			if c.start+1 <= p.last && c.start+k >= p.first {
				overlaps = true
				break
			}
		}
		if !overlaps {
			cands = append(cands, candidate{first: c.start + 1, last: c.start + k, score: c.score})
		}
	}
	return cands
}

// bigrams returns the sorted byte bigrams of the line with surrounding
// white space removed.
func bigrams(line string) []uint16 {
	line = strings.TrimSpace(line)
	if len(line) < 2 {
		if len(line) == 1 {
			return []uint16{uint16(line[0])}
		}
		return nil
	}
	g := make([]uint16, len(line)-1)
	for i := 0; i+1 < len(line); i++ {
		g[i] = uint16(line[i])<<8 | uint16(line[i+1])
	}
	slices.Sort(g)
	return g
}

// common counts the bigrams a and b share, as multisets.
func common(a, b []uint16) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			n++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return n
}
