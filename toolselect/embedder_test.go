package toolselect

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/agentharness/harness"
)

// embeddingServer is a loopback server speaking the OpenAI embeddings wire
// format. Its "model" hashes lowercase words into 128 dimensions: texts
// that share words point the same way, which is all a ranking test needs.
type embeddingServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests int
	inputs   int
	delay    time.Duration
	status   int
}

func newEmbeddingServer(t *testing.T) *embeddingServer {
	s := &embeddingServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *embeddingServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if r.Header.Get("Authorization") != "Bearer sk-test" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`))
		return
	}
	var req struct {
		Model          string   `json:"model"`
		Input          []string `json:"input"`
		EncodingFormat string   `json:"encoding_format"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "test-embed" || req.EncodingFormat != "float" || len(req.Input) == 0 {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests++
	s.inputs += len(req.Input)
	delay, status := s.delay, s.status
	s.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	if status != 0 {
		http.Error(w, `{"error":{"message":"overloaded"}}`, status)
		return
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	}
	resp := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
		Usage  struct {
			PromptTokens int `json:"prompt_tokens"`
			TotalTokens  int `json:"total_tokens"`
		} `json:"usage"`
	}{Object: "list", Model: req.Model}
	// Answer in reverse order: clients must use "index".
	for i := len(req.Input) - 1; i >= 0; i-- {
		resp.Data = append(resp.Data, item{Object: "embedding", Index: i, Embedding: hashEmbed(req.Input[i])})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

func hashEmbed(text string) []float64 {
	v := make([]float64, 128)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%128]++
	}
	return v
}

func (s *embeddingServer) counts() (int, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, s.inputs
}

func TestEmbedderRanksAndCaches(t *testing.T) {
	srv := newEmbeddingServer(t)
	e := &Embedder{BaseURL: srv.URL + "/v1", Model: "test-embed", APIKey: "sk-test"}
	specs := loadSpecs(t)
	ctx := context.Background()

	scores, err := e.Rank(ctx, "Close issue 4512 as fixed", specs)
	if err != nil {
		t.Fatal(err)
	}
	best := 0
	for i := range scores {
		if scores[i] > scores[best] {
			best = i
		}
	}
	if specs[best].Name != "close_issue" {
		t.Errorf("best %s", specs[best].Name)
	}
	// 84 tools in batches of 64, then the request.
	if req, in := srv.counts(); req != 3 || in != 85 {
		t.Errorf("first turn: %d requests, %d inputs; want 3, 85", req, in)
	}
	// The tool vectors are cached: one request per turn.
	if _, err := e.Rank(ctx, "Make Jordan an admin", specs); err != nil {
		t.Fatal(err)
	}
	if req, in := srv.counts(); req != 4 || in != 86 {
		t.Errorf("second turn: %d requests, %d inputs; want 4, 86", req, in)
	}
	// A changed tool set is embedded again.
	changed := append([]harness.ToolSpec(nil), specs[:30]...)
	if _, err := e.Rank(ctx, "Make Jordan an admin", changed); err != nil {
		t.Fatal(err)
	}
	if req, in := srv.counts(); req != 6 || in != 117 {
		t.Errorf("changed set: %d requests, %d inputs; want 6, 117", req, in)
	}
}

// TestEmbedderRecall reports the hashed bag-of-words stand-in on the
// ranking table; it measures the plumbing, not a real embedding model.
func TestEmbedderRecall(t *testing.T) {
	srv := newEmbeddingServer(t)
	e := &Embedder{BaseURL: srv.URL + "/v1/", Model: "test-embed", APIKey: "sk-test"}
	specs := loadSpecs(t)
	r20, _ := recallAt(t, e, specs, loadCases(t, "ranking_cases.json"), 20)
	t.Logf("hashed bag-of-words embeddings: recall@20 = %.3f", r20)
	if r20 < 0.5 {
		t.Errorf("recall@20 = %.3f: the vectors do not reach the ranking", r20)
	}
}

func TestEmbedderErrors(t *testing.T) {
	srv := newEmbeddingServer(t)
	specs := loadSpecs(t)[:5]
	ctx := context.Background()

	_, err := (&Embedder{BaseURL: srv.URL + "/v1", Model: "test-embed", APIKey: "wrong"}).Rank(ctx, "x", specs)
	if err == nil || !strings.Contains(err.Error(), "HTTP 401: Incorrect API key provided") {
		t.Errorf("401: %v", err)
	}
	_, err = (&Embedder{BaseURL: srv.URL + "/nope", Model: "test-embed", APIKey: "sk-test"}).Rank(ctx, "x", specs)
	if err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("404: %v", err)
	}
	if _, err = (&Embedder{}).Rank(ctx, "x", specs); err == nil {
		t.Error("no URL: no error")
	}
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"data":[{"index":0,"embedding":[1,0]},{"index":0,"embedding":[0,1]}]}`))
	}))
	defer bad.Close()
	if _, err = (&Embedder{BaseURL: bad.URL, Model: "m"}).Rank(ctx, "x", specs[:2]); err == nil || !strings.Contains(err.Error(), "repeated index") {
		t.Errorf("repeated index: %v", err)
	}
}

// A slow or failing embeddings endpoint costs the turn its selection,
// never the turn: every tool is offered and an event says why.
func TestSelectorWithEmbedderFallsBack(t *testing.T) {
	srv := newEmbeddingServer(t)
	specs := loadSpecs(t)
	for _, tc := range []struct {
		name    string
		delay   time.Duration
		status  int
		timeout time.Duration
		want    string
	}{
		// The slow endpoint answers only after hangBound (or when the
		// request is cancelled): only the 300 ms timeout ends the wait.
		{"slow", 3 * hangBound, 0, 300 * time.Millisecond, "timed out"},
		// The overloaded one answers at once; its answer, not a timeout,
		// must be what falls back, however slow the machine.
		{"overloaded", 0, http.StatusServiceUnavailable, hangBound, "HTTP 503"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv.mu.Lock()
			srv.delay, srv.status = tc.delay, tc.status
			srv.mu.Unlock()
			var ev events
			sel := &Selector{Ranker: &Embedder{BaseURL: srv.URL + "/v1", Model: "test-embed", APIKey: "sk-test"}, Timeout: tc.timeout}
			got, err := sel.Select(ev.ctx(), harness.NewConversation("c"), "Close issue 4512", specs)
			if err != nil || len(got) != len(specs) {
				t.Fatalf("%d tools, %v", len(got), err)
			}
			if e := ev.last(t); e.Kind != harness.EventWarning || !strings.Contains(e.Detail, tc.want) {
				t.Errorf("event %+v", e)
			}
		})
	}
	srv.mu.Lock()
	srv.delay, srv.status = 0, 0
	srv.mu.Unlock()
	sel := &Selector{Ranker: &Embedder{BaseURL: srv.URL + "/v1", Model: "test-embed", APIKey: "sk-test"}, Timeout: hangBound}
	got, _ := sel.Select(context.Background(), nil, "Close issue 4512 as fixed", specs)
	if len(got) != 20 || !has(got, "close_issue") {
		t.Errorf("%v", names(got))
	}
}

func TestToolText(t *testing.T) {
	spec := harness.ToolSpec{Name: "getCurrentUser", Description: "Who is signed in.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"b":{"description":"second"},"a":{"type":"string"}}}`)}
	if got := toolText(spec); got != "get Current User: Who is signed in. Parameters: a b second" {
		t.Errorf("%q", got)
	}
}
