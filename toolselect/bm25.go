package toolselect

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"math"
	"sort"
	"sync"

	"github.com/agentharness/harness"
)

// Ranker scores tools against a request. Rank returns one score per tool,
// parallel to tools; higher is more relevant. It must honour ctx.
type Ranker interface {
	Rank(ctx context.Context, query string, tools []harness.ToolSpec) ([]float64, error)
}

// rankerFunc adapts a function to the Ranker interface.
type rankerFunc func(ctx context.Context, query string, tools []harness.ToolSpec) ([]float64, error)

// Rank calls f.
func (f rankerFunc) Rank(ctx context.Context, query string, tools []harness.ToolSpec) ([]float64, error) {
	return f(ctx, query, tools)
}

// BM25 ranks tools by Okapi BM25 over each tool's text: its name (counted
// NameWeight times, split at snake_case and camelCase), its description,
// and the names, descriptions and enum values of its parameters. Request
// terms also match their synonyms at a lower weight (see synonymWeight).
// It is offline and deterministic. The index is kept until the tool set
// changes. The zero value is ready to use and safe for concurrent use.
type BM25 struct {
	// K1 and B are the BM25 parameters (defaults 1.2 and 0.75).
	K1, B float64
	// NameWeight is how many times a tool's name counts (default 3): a
	// name is the densest description a tool has.
	NameWeight int
	// NoSynonyms turns off the synonym expansion of request terms.
	NoSynonyms bool

	mu    sync.Mutex
	index *bm25Index
}

type bm25Index struct {
	key   [32]byte
	docs  []map[string]int // term frequencies per tool
	lens  []int
	avg   float64
	df    map[string]int
	k1, b float64
}

// Rank implements Ranker.
func (r *BM25) Rank(ctx context.Context, query string, tools []harness.ToolSpec) ([]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	idx := r.indexFor(tools)
	terms := tokenize(query)
	q := map[string]float64{}
	if r.NoSynonyms {
		for _, t := range terms {
			q[t]++
		}
	} else {
		q = expandQuery(terms)
	}
	scores := make([]float64, len(tools))
	n := float64(len(tools))
	// Terms in a fixed order: float sums are then bit-for-bit repeatable.
	keys := make([]string, 0, len(q))
	for t := range q {
		keys = append(keys, t)
	}
	sort.Strings(keys)
	for _, t := range keys {
		df := float64(idx.df[t])
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		w := q[t]
		for i, doc := range idx.docs {
			tf := float64(doc[t])
			if tf == 0 {
				continue
			}
			norm := idx.k1 * (1 - idx.b + idx.b*float64(idx.lens[i])/idx.avg)
			scores[i] += w * idf * tf * (idx.k1 + 1) / (tf + norm)
		}
	}
	return scores, nil
}

func (r *BM25) indexFor(tools []harness.ToolSpec) *bm25Index {
	key := fingerprint(tools)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.index != nil && r.index.key == key {
		return r.index
	}
	k1, b, nameWeight := r.K1, r.B, r.NameWeight
	if k1 <= 0 {
		k1 = 1.2
	}
	if b <= 0 || b > 1 {
		b = 0.75
	}
	if nameWeight <= 0 {
		nameWeight = 3
	}
	idx := &bm25Index{key: key, df: map[string]int{}, k1: k1, b: b}
	total := 0
	for _, t := range tools {
		doc := map[string]int{}
		n := 0
		add := func(terms []string, times int) {
			for _, term := range terms {
				doc[term] += times
				n += times
			}
		}
		add(tokenize(t.Name), nameWeight)
		add(tokenize(t.Description), 1)
		add(tokenize(schemaText(t.InputSchema)), 1)
		for term := range doc {
			idx.df[term]++
		}
		idx.docs = append(idx.docs, doc)
		idx.lens = append(idx.lens, n)
		total += n
	}
	idx.avg = 1
	if len(tools) > 0 && total > 0 {
		idx.avg = float64(total) / float64(len(tools))
	}
	r.index = idx
	return idx
}

// fingerprint identifies a tool set by everything a ranker reads of it.
func fingerprint(tools []harness.ToolSpec) [32]byte {
	h := sha256.New()
	for _, t := range tools {
		for _, s := range []string{t.Name, t.Description, string(t.InputSchema)} {
			var n [8]byte
			l := len(s)
			for i := range n {
				n[i] = byte(l >> (8 * i))
			}
			h.Write(n[:])
			h.Write([]byte(s))
		}
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// maxSchemaDepth bounds the walk of a schema: deeper nesting adds little
// text and an adversarial schema could nest without end.
const maxSchemaDepth = 6

// schemaText collects the parameter names, descriptions, titles and enum
// values of a JSON schema, in a deterministic order.
func schemaText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	var out []byte
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		m, ok := v.(map[string]any)
		if !ok || depth > maxSchemaDepth {
			return
		}
		for _, k := range []string{"description", "title"} {
			if s, ok := m[k].(string); ok && depth > 0 {
				out = append(append(out, s...), ' ')
			}
		}
		if enum, ok := m["enum"].([]any); ok {
			for _, e := range enum {
				if s, ok := e.(string); ok {
					out = append(append(out, s...), ' ')
				}
			}
		}
		if props, ok := m["properties"].(map[string]any); ok {
			names := make([]string, 0, len(props))
			for name := range props {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				out = append(append(out, name...), ' ')
				walk(props[name], depth+1)
			}
		}
		walk(m["items"], depth+1)
		for _, k := range []string{"anyOf", "oneOf", "allOf"} {
			if alts, ok := m[k].([]any); ok {
				for _, a := range alts {
					walk(a, depth+1)
				}
			}
		}
	}
	walk(v, 0)
	return string(out)
}
