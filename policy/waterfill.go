package policy

import "slices"

// waterFill shares budget among results of the given sizes the way water
// fills a row of glasses: the sizes are sorted, each result is
// offered an equal share of what is left, a result that fits under its
// share is kept whole and releases its slack to the larger ones, and the
// cap settles where the remaining large results exhaust the budget. No
// result is cut below minKeep (or its own size, when smaller).
//
// It returns the cap and the size each result keeps, in the order of
// sizes: kept[i] = min(sizes[i], cap). When everything fits, nothing is cut
// and cap is the largest size. When len(sizes) × minKeep ≤ budget, the
// kept sizes sum to at most budget and cap is the largest that does; the
// total can exceed the budget only when the floor demands it.
//
// Negative sizes, budgets and floors count as zero. waterFill is a pure
// function: sizes is not modified.
func waterFill(sizes []int, budget, minKeep int) (limit int, kept []int) {
	budget, minKeep = max(budget, 0), max(minKeep, 0)
	kept = make([]int, len(sizes))
	total, largest := 0, 0
	for i, s := range sizes {
		s = max(s, 0)
		kept[i] = s
		total += s
		largest = max(largest, s)
	}
	if total <= budget {
		return largest, kept
	}
	limit = max(fillLevel(kept, budget), minKeep)
	for i, s := range kept {
		kept[i] = min(s, limit)
	}
	return limit, kept
}

// fillLevel is the water-filling loop on a sorted copy of sizes (all ≥ 0,
// summing to more than budget): the share at which the first result that
// does not fit stops the filling.
func fillLevel(sizes []int, budget int) int {
	sorted := slices.Clone(sizes)
	slices.Sort(sorted)
	remaining := budget
	for k, s := range sorted {
		share := remaining / (len(sorted) - k)
		if s <= share {
			remaining -= s
			continue
		}
		return share
	}
	// Unreachable when the sizes sum to more than budget: the largest
	// result cannot fit in its share then. Keep everything whole.
	return sorted[len(sorted)-1]
}
