package main

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/postgres"
	"github.com/agentharness/harness/store/sqlite"
)

// loadUpstream answers every Messages request with a streamed tool call
// (or, at the last round, text) after the model's time (modelTime around
// think; zero: at once), and counts the cache breaks it sees: a tool
// result sent with other bytes than the conversation's previous request
// sent it.
type loadUpstream struct {
	*httptest.Server
	rounds int
	think  time.Duration
	mu     sync.Mutex
	last   map[string]map[string]string // by conversation (first message)
	breaks int
}

func (u *loadUpstream) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	results := map[string]string{}
	conv := ""
	for i, m := range req.Messages {
		var blocks []struct {
			Type    string          `json:"type"`
			Text    string          `json:"text"`
			ID      string          `json:"tool_use_id"`
			Content json.RawMessage `json:"content"`
		}
		_ = json.Unmarshal(m.Content, &blocks)
		for _, b := range blocks {
			if i == 0 && b.Type == "text" {
				conv = b.Text
			}
			if b.Type == "tool_result" {
				results[b.ID] = string(b.Content)
			}
		}
	}
	u.mu.Lock()
	for id, c := range u.last[conv] {
		if got, ok := results[id]; ok && got != c {
			u.breaks++
		}
	}
	u.last[conv] = results
	u.mu.Unlock()
	n := len(req.Messages) / 2
	var calls []wiretest.Call
	text := ""
	if n+1 < u.rounds {
		calls = []wiretest.Call{{ID: fmt.Sprintf("call_%d", n), Name: "Bash", Args: `{"command":"cat package-lock.json"}`}}
	} else {
		text = "done"
	}
	reply := wiretest.AnthropicStream("m", text, calls, wiretest.Usage{Input: 100, Output: 10})
	w.Header().Set("Content-Type", "text/event-stream")
	// A model streams its first event soon and the rest over its time.
	for i, e := range reply.Events {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.Event, e.Data)
		if i == 0 && u.think > 0 {
			w.(http.Flusher).Flush()
			select {
			case <-time.After(modelTime(u.think, conv, n)):
			case <-r.Context().Done():
				return
			}
		}
	}
	// Streamed as a model API streams: chunked, without a length, so a
	// client reads the answer's end when the proxy ends it.
	w.(http.Flusher).Flush()
}

// modelTime is the upstream's time for a conversation's round: spread
// evenly from half to one and a half times think, by a hash of the two, so
// that conversations started together drift apart as agents' calls do
// (the client takes the same time off its latency).
func modelTime(think time.Duration, conv string, round int) time.Duration {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%d", conv, round)
	return think/2 + time.Duration(h.Sum64()%uint64(think+1))
}

// loadEnv reads an integer size from the environment.
func loadEnv(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// loadFigures are one configuration's results.
type loadFigures struct {
	label                string
	requests             int
	seconds              float64
	p50, p99             time.Duration
	peakRSS              []int64 // KiB per replica
	cpuProxies, cpuPG    float64 // CPU seconds: the replicas', the cluster's
	cpuClient            float64 // CPU seconds: this process (clients, upstream)
	lost, dup, breaks    int
	failed               int
	restarts             int
	conversationsChecked int
}

// TestProxyLoad measures replicas of "harness proxy" under load (set
// HARNESS_LOAD=1; sizes: HARNESS_LOAD_CONVS, HARNESS_LOAD_ROUNDS,
// HARNESS_LOAD_REPLICAS (a list such as 1,2,4), HARNESS_LOAD_RESTART_EVERY
// (seconds between PostgreSQL restarts in the second pass; 0 skips it)),
// HARNESS_LOAD_PASSES (2: the PostgreSQL configurations without restarts
// run again in reverse order), HARNESS_LOAD_POOL (each replica's write pool,
// pool_max_conns; default 8), HARNESS_LOAD_MODEL_MS (the upstream's time
// per answer, streamed after its first event; default 0: at once)).
// Each configuration runs CONVS concurrent streamed conversations of
// ROUNDS rounds, each request landing on replica (conversation + round)
// mod N, with a 30 KiB tool result per round (cut by the ceiling); one
// replica on SQLite is the baseline. It reports requests per second,
// p50/p99 latency through the proxy less the upstream's time (what the
// proxy adds), peak RSS per replica, rounds lost or stored twice, and
// cache breaks seen by the upstream.
func TestProxyLoad(t *testing.T) {
	if os.Getenv("HARNESS_LOAD") == "" {
		t.Skip("set HARNESS_LOAD=1 to run the load figures")
	}
	convs, rounds := loadEnv("HARNESS_LOAD_CONVS", 200), loadEnv("HARNESS_LOAD_ROUNDS", 10)
	restartEvery := loadEnv("HARNESS_LOAD_RESTART_EVERY", 0)
	var counts []int
	for _, s := range strings.Split(cmpOr(os.Getenv("HARNESS_LOAD_REPLICAS"), "1,2,4"), ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n > 0 {
			counts = append(counts, n)
		}
	}
	result := lockFileText()[:30<<10]
	var figs []loadFigures
	figs = append(figs, runLoad(t, "sqlite", 1, convs, rounds, result, 0))
	for _, n := range counts {
		figs = append(figs, runLoad(t, "postgres", n, convs, rounds, result, 0))
	}
	t.Log(p99Ratios(figs[1:]))
	if loadEnv("HARNESS_LOAD_PASSES", 1) > 1 {
		// Again in reverse order (1, 2, 4, 4, 2, 1): a machine whose load
		// drifts during the run weighs on every replica count alike.
		from := len(figs)
		for i := len(counts) - 1; i >= 0; i-- {
			figs = append(figs, runLoad(t, "postgres", counts[i], convs, rounds, result, 0))
		}
		t.Log(p99Ratios(figs[from:]))
	}
	if restartEvery > 0 {
		for _, n := range counts {
			figs = append(figs, runLoad(t, "postgres", n, convs, rounds, result, time.Duration(restartEvery)*time.Second))
		}
	}
	var b strings.Builder
	think := time.Duration(loadEnv("HARNESS_LOAD_MODEL_MS", 0)) * time.Millisecond
	fmt.Fprintf(&b, "\nthe upstream's time per answer: %s to %s (taken off each latency)\n", think/2, think*3/2)
	fmt.Fprintf(&b, "\n| store | replicas | PG restarts | requests | req/s | p50 | p99 | peak RSS per replica (MiB) | CPU ms per request: replicas, PostgreSQL, clients | failed | lost | stored twice | cache breaks |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, f := range figs {
		var rss []string
		for _, k := range f.peakRSS {
			rss = append(rss, strconv.FormatInt(k>>10, 10))
		}
		perReq := func(sec float64) string { return fmt.Sprintf("%.1f", 1000*sec/float64(max(f.requests, 1))) }
		pg := perReq(f.cpuPG)
		if f.restarts > 0 || f.label == "sqlite 1" {
			pg = "–" // a restart starts another postmaster
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %.0f | %s | %s | %s | %s, %s, %s | %d | %d | %d | %d |\n", strings.Fields(f.label)[0], strings.Fields(f.label)[1], f.restarts, f.requests,
			float64(f.requests)/f.seconds, f.p50.Round(100*time.Microsecond), f.p99.Round(100*time.Microsecond), strings.Join(rss, ", "),
			perReq(f.cpuProxies), pg, perReq(f.cpuClient), f.failed, f.lost, f.dup, f.breaks)
	}
	t.Log(b.String())
	for _, f := range figs {
		if f.restarts == 0 && (f.lost != 0 || f.dup != 0 || f.breaks != 0 || f.failed != 0) {
			t.Errorf("%s: %d failed, %d lost, %d stored twice, %d cache breaks; want 0", f.label, f.failed, f.lost, f.dup, f.breaks)
		}
	}
}

// p99Ratios reports, for one pass, each PostgreSQL configuration's p99
// over one PostgreSQL replica's.
func p99Ratios(pass []loadFigures) string {
	var one time.Duration
	for _, f := range pass {
		if f.label == "postgres 1" {
			one = f.p99
		}
	}
	if one == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("p99 over one PostgreSQL replica's:")
	for _, f := range pass {
		fmt.Fprintf(&b, " %s %.2f×;", f.label, float64(f.p99)/float64(one))
	}
	return b.String()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// runLoad runs one configuration.
func runLoad(t *testing.T, backend string, replicas, convs, rounds int, result string, restartEvery time.Duration) loadFigures {
	t.Helper()
	think := time.Duration(loadEnv("HARNESS_LOAD_MODEL_MS", 0)) * time.Millisecond
	up := &loadUpstream{rounds: rounds, think: think, last: map[string]map[string]string{}}
	up.Server = httptest.NewServer(http.HandlerFunc(up.serve))
	defer up.Close()
	ws := t.TempDir()
	db := filepath.Join(ws, "harness.db")
	if backend == "postgres" {
		db = pgServer.DSN(t)
		if n := loadEnv("HARNESS_LOAD_POOL", 0); n > 0 {
			db += fmt.Sprintf("&pool_max_conns=%d", n) // each replica's write pool
		}
	}
	var procs []*replicaProc
	for range replicas {
		procs = append(procs, startReplica(t, db, ws, up.URL))
	}
	f := loadFigures{label: fmt.Sprintf("%s %d", backend, replicas)}
	stopRestarts := make(chan struct{})
	restartsDone := make(chan int)
	go func() {
		n := 0
		defer func() { restartsDone <- n }()
		if restartEvery <= 0 {
			<-stopRestarts
			return
		}
		for {
			select {
			case <-stopRestarts:
				return
			case <-time.After(restartEvery):
				if err := pgServer.Restart(); err != nil {
					t.Errorf("restarting PostgreSQL: %v", err)
					return
				}
				n++
			}
		}
	}()
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	pg0, self0 := postgresCPU(), procCPU(os.Getpid(), false)
	start := time.Now()
	for c := range convs {
		wg.Go(func() {
			var results []string
			key := fmt.Sprintf("sk-load-%d", c%8) // eight tenants
			// With a model's time, conversations start spread over it.
			time.Sleep(time.Duration(c) * think / time.Duration(convs))
			for r := range rounds {
				name := fmt.Sprintf("load conversation %d", c)
				body := anthropicBody(name, results)
				t0 := time.Now()
				err := postReplica(procs[(c+r)%replicas].url, key, body)
				d := time.Since(t0) // what the proxy added: less the model's time
				if think > 0 {
					d -= modelTime(think, name, r)
				}
				if d < 0 {
					t.Errorf("%s round %d answered before the model's time", name, r)
				}
				mu.Lock()
				if err != nil {
					f.failed++
				} else {
					lat = append(lat, d)
				}
				mu.Unlock()
				if err != nil {
					return
				}
				results = append(results, result+fmt.Sprintf("\nconversation %d round %d\n", c, r))
			}
		})
	}
	wg.Wait()
	f.seconds = time.Since(start).Seconds()
	f.cpuPG, f.cpuClient = postgresCPU()-pg0, procCPU(os.Getpid(), false)-self0
	close(stopRestarts)
	f.restarts = <-restartsDone
	f.requests = len(lat)
	slices.Sort(lat)
	if len(lat) > 0 {
		f.p50, f.p99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	for _, p := range procs {
		f.peakRSS = append(f.peakRSS, peakRSS(p.cmd.Process.Pid))
		f.cpuProxies += procCPU(p.cmd.Process.Pid, false)
		p.stop()
	}
	f.breaks = up.breaks
	f.lost, f.dup, f.conversationsChecked = checkStored(t, backend, db, convs, rounds)
	return f
}

// peakRSS reads a process's peak resident set (VmHWM) in KiB.
func peakRSS(pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// checkStored counts the rounds missing from the store and those stored
// twice: each conversation should hold one turn of rounds rounds, each
// round with one result but the last.
func checkStored(t *testing.T, backend, db string, convs, rounds int) (lost, dup, checked int) {
	ctx := context.Background()
	var st store.Store
	var err error
	if backend == "postgres" {
		st, err = postgres.Open(ctx, db, nil)
	} else {
		st, err = sqlite.Open(ctx, db, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	list, err := st.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != convs {
		t.Errorf("%s: %d conversations stored, want %d", backend, len(list), convs)
	}
	for _, c := range list {
		conv, err := st.Load(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		seen := map[string]int{}
		n := 0
		for _, turn := range conv.Turns {
			for _, r := range turn.Rounds {
				n++
				for _, res := range r.Results {
					seen[res.CallID]++
				}
			}
		}
		if n < rounds {
			lost += rounds - n
		}
		if n > rounds {
			dup += n - rounds
		}
		for _, k := range seen {
			if k > 1 {
				dup += k - 1
			}
		}
	}
	lost += (convs - len(list)) * rounds
	return lost, dup, checked
}
