package toolselect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"

	"github.com/agentharness/harness"
)

// defaultEmbeddingBatch is how many texts one embeddings request carries.
const defaultEmbeddingBatch = 64

// maxEmbeddingResponse bounds an embeddings response read into memory.
const maxEmbeddingResponse = 64 << 20

// Embedder ranks tools by the cosine similarity between an embedding of
// the request and embeddings of the tools, from an OpenAI-compatible
// POST {BaseURL}/embeddings endpoint (OpenAI, Azure-compatible gateways,
// Ollama, vLLM, llama.cpp, LM Studio). A tool's text is its name (split
// into words), its description and its parameter names and descriptions.
// Tool vectors are computed once and kept until the tool set changes, so a
// turn costs one embedding of the request. It is safe for concurrent use.
type Embedder struct {
	// BaseURL is the API root, such as "https://api.openai.com/v1" or
	// "http://localhost:11434/v1"; "/embeddings" is appended.
	BaseURL string
	// Model is the embedding model ("text-embedding-3-small").
	Model string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// Dimensions, when set, asks models that support it for shorter
	// vectors.
	Dimensions int
	// BatchSize is how many texts go in one request (default 64).
	BatchSize int
	// HTTPClient is used for the requests (default http.DefaultClient).
	HTTPClient *http.Client

	mu      sync.Mutex
	key     [32]byte
	vectors [][]float64 // tool vectors of the set fingerprinted by key
}

// Rank implements Ranker.
func (e *Embedder) Rank(ctx context.Context, query string, tools []harness.ToolSpec) ([]float64, error) {
	vecs, err := e.toolVectors(ctx, tools)
	if err != nil {
		return nil, err
	}
	qv, err := e.embed(ctx, []string{query})
	if err != nil {
		return nil, err
	}
	if len(vecs) > 0 && len(qv[0]) != len(vecs[0]) {
		e.mu.Lock()
		e.vectors = nil // embedded by another model: embed the tools again next time
		e.mu.Unlock()
		return nil, fmt.Errorf("embedder: the request vector has %d dimensions, the tool vectors %d", len(qv[0]), len(vecs[0]))
	}
	scores := make([]float64, len(tools))
	for i, v := range vecs {
		scores[i] = cosine(qv[0], v)
	}
	return scores, nil
}

// toolVectors returns the cached vectors of tools, embedding them when the
// set changed.
func (e *Embedder) toolVectors(ctx context.Context, tools []harness.ToolSpec) ([][]float64, error) {
	key := fingerprint(tools)
	e.mu.Lock()
	if e.vectors != nil && e.key == key {
		v := e.vectors
		e.mu.Unlock()
		return v, nil
	}
	e.mu.Unlock()
	texts := make([]string, len(tools))
	for i, t := range tools {
		texts[i] = toolText(t)
	}
	batch := e.BatchSize
	if batch <= 0 {
		batch = defaultEmbeddingBatch
	}
	var vecs [][]float64
	for start := 0; start < len(texts); start += batch {
		v, err := e.embed(ctx, texts[start:min(start+batch, len(texts))])
		if err != nil {
			return nil, err
		}
		vecs = append(vecs, v...)
	}
	e.mu.Lock()
	e.key, e.vectors = key, vecs
	e.mu.Unlock()
	return vecs, nil
}

// toolText is the text an Embedder embeds for a tool.
func toolText(t harness.ToolSpec) string {
	var b strings.Builder
	b.WriteString(strings.Join(splitWords(t.Name), " "))
	if t.Description != "" {
		b.WriteString(": ")
		b.WriteString(t.Description)
	}
	if p := schemaText(t.InputSchema); p != "" {
		b.WriteString(" Parameters: ")
		b.WriteString(strings.TrimSpace(p))
	}
	return b.String()
}

type embeddingRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

type embeddingResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

// embed returns one vector per text, in order.
func (e *Embedder) embed(ctx context.Context, texts []string) ([][]float64, error) {
	if e.BaseURL == "" || e.Model == "" {
		return nil, errors.New("embedder: BaseURL and Model must be set")
	}
	body, err := json.Marshal(embeddingRequest{Model: e.Model, Input: texts, EncodingFormat: "float", Dimensions: e.Dimensions})
	if err != nil {
		return nil, fmt.Errorf("embedder: %w", err)
	}
	url := strings.TrimRight(e.BaseURL, "/") + "/embeddings"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embedder: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.APIKey)
	}
	client := e.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embedder: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxEmbeddingResponse+1))
	if err != nil {
		return nil, fmt.Errorf("embedder: reading the response: %w", err)
	}
	if len(raw) > maxEmbeddingResponse {
		return nil, fmt.Errorf("embedder: response larger than %d bytes", maxEmbeddingResponse)
	}
	var out embeddingResponse
	jerr := json.Unmarshal(raw, &out)
	if resp.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(string(raw[:min(len(raw), 300)]))
		if jerr == nil && out.Error != nil && out.Error.Message != "" {
			msg = out.Error.Message
		}
		return nil, fmt.Errorf("embedder: %s: HTTP %d: %s", url, resp.StatusCode, msg)
	}
	if jerr != nil {
		return nil, fmt.Errorf("embedder: the response is not embeddings JSON: %w", jerr)
	}
	vecs := make([][]float64, len(texts))
	for _, d := range out.Data {
		if d.Index < 0 || d.Index >= len(texts) || vecs[d.Index] != nil {
			return nil, fmt.Errorf("embedder: bad or repeated index %d in the response", d.Index)
		}
		vecs[d.Index] = d.Embedding
	}
	for i, v := range vecs {
		if len(v) == 0 {
			return nil, fmt.Errorf("embedder: no embedding for input %d", i)
		}
		if len(v) != len(vecs[0]) {
			return nil, fmt.Errorf("embedder: vectors of different lengths (%d and %d)", len(vecs[0]), len(v))
		}
	}
	return vecs, nil
}

// cosine is the cosine similarity of a and b (0 when either is zero or
// their lengths differ).
func cosine(a, b []float64) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb))
}
