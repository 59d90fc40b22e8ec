package toolselect

import (
	"context"
	"sort"
	"testing"

	"github.com/agentharness/harness"
)

// recallAt returns the mean, over cases, of the share of a case's expected
// tools found in the ranker's top k, and the cases that missed.
func recallAt(t *testing.T, r Ranker, specs []harness.ToolSpec, cases []rankingCase, k int) (float64, []string) {
	t.Helper()
	var sum float64
	var misses []string
	for _, c := range cases {
		scores, err := r.Rank(context.Background(), c.Request, specs)
		if err != nil {
			t.Fatal(err)
		}
		order := make([]int, len(specs))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
		top := map[string]int{}
		for rank, i := range order[:k] {
			top[specs[i].Name] = rank + 1
		}
		found := 0
		for _, want := range c.Expect {
			if _, ok := top[want]; ok {
				found++
			} else {
				misses = append(misses, c.Request+" → "+want)
			}
		}
		sum += float64(found) / float64(len(c.Expect))
	}
	return sum / float64(len(cases)), misses
}

// TestRankingQuality reports recall@5 and recall@20 of the default BM25
// ranker against the 84-tool fixture, on two tables of requests written as
// a user would ask, mostly without the tool's words: ranking_cases.json
// (46 requests, written with the synonym table) and ranking_heldout.json
// (24 requests written after the synonym table was frozen). The same
// figures without synonyms show what the expansion buys.
func TestRankingQuality(t *testing.T) {
	specs := loadSpecs(t)
	if len(specs) != 84 {
		t.Fatalf("%d tools", len(specs))
	}
	for _, tc := range []struct {
		file string
		min  float64 // recall@20 floor
	}{
		{"ranking_cases.json", 0.95},
		{"ranking_heldout.json", 0.90},
	} {
		cases := loadCases(t, tc.file)
		if len(cases) < 20 {
			t.Fatalf("%s: %d cases", tc.file, len(cases))
		}
		for _, r := range []struct {
			name   string
			ranker *BM25
		}{{"BM25", &BM25{}}, {"BM25 without synonyms", &BM25{NoSynonyms: true}}} {
			r5, miss5 := recallAt(t, r.ranker, specs, cases, 5)
			r20, miss20 := recallAt(t, r.ranker, specs, cases, 20)
			t.Logf("%s, %s (%d requests × %d tools): recall@5 = %.3f, recall@20 = %.3f", r.name, tc.file, len(cases), len(specs), r5, r20)
			if r.ranker.NoSynonyms {
				continue
			}
			for _, m := range miss5 {
				t.Logf("  not in top 5: %s", m)
			}
			for _, m := range miss20 {
				t.Logf("  not in top 20: %s", m)
			}
			if r20 < tc.min {
				t.Errorf("%s: recall@20 = %.3f, below %.2f", tc.file, r20, tc.min)
			}
		}
	}
}
