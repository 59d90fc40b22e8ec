package temporal_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/pgtest"
	"github.com/agentharness/harness/store"
	htemporal "github.com/agentharness/harness/temporal"
)

// bigBytes is the size of the "big" tool's result: far above Temporal's
// 256 KB payload warning, so a test sees whether any result travels in
// the workflow's history.
const bigBytes = 1 << 20

// rig is one deployment: a store, a journal, a counter file, the engine
// and the activities a worker runs.
type rig struct {
	dir     string
	store   store.Store
	journal htemporal.Journal
	acts    *htemporal.Activities
}

// newRig opens the rig in dir. block, when set, makes this process stop
// dead at one point of a turn (see blocker) so the test can kill it there.
// A file "dsn" in dir names a PostgreSQL database to hold both the store
// and the journal (see usePostgres); else they are SQLite files in dir.
func newRig(ctx context.Context, dir string, block *blocker) (*rig, error) {
	return openRig(ctx, dir, block, nil)
}

// openRig is newRig whose store and journal calls are timed on clock,
// when it is not nil (see TestScale).
func openRig(ctx context.Context, dir string, block *blocker, clock *storeClock) (*rig, error) {
	db, jpath := filepath.Join(dir, "harness.db"), filepath.Join(dir, "journal.db")
	if dsn, err := os.ReadFile(filepath.Join(dir, "dsn")); err == nil {
		db, jpath = string(dsn), string(dsn)
	}
	st, err := htemporal.OpenStore(ctx, db)
	if err != nil {
		return nil, err
	}
	j, err := htemporal.OpenJournal(ctx, jpath)
	if err != nil {
		st.Close()
		return nil, err
	}
	var jr htemporal.Journal = j
	var model harness.Model = harness.ModelFunc(scriptModel)
	if block != nil {
		jr, model = block.journal(j), block.model(model)
	}
	var rec store.Store = st
	if clock != nil {
		rec, jr = &timedStore{Store: st, clock: clock}, &timedJournal{Journal: jr, clock: clock}
	}
	counter := filepath.Join(dir, "counter")
	eng, err := harness.NewEngine(&harness.Options{
		System:    "You count.",
		Tools:     []harness.Tool{countTool(counter), bigTool(counter)},
		MaxRounds: 6,
		Recorder:  rec,
	})
	if err != nil {
		st.Close()
		j.Close()
		return nil, err
	}
	acts := &htemporal.Activities{Engine: eng, Store: rec, Model: model, Journal: jr}
	return &rig{dir: dir, store: st, journal: j, acts: acts}, nil
}

func (r *rig) close() {
	r.store.Close()
	r.journal.Close()
}

// countTool appends its call id to the counter file: a write whose every
// execution the test can count, across processes.
func countTool(counter string) harness.Tool {
	return harness.Tool{
		Spec: harness.ToolSpec{Name: "count", Description: "Counts one.", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			if err := recordRun(ctx, counter, c); err != nil {
				return nil, err
			}
			return harness.TextResult("counted " + c.ID + " with " + string(c.Args)), nil
		},
	}
}

// bigTool returns bigBytes of text and counts itself like countTool.
func bigTool(counter string) harness.Tool {
	return harness.Tool{
		Spec: harness.ToolSpec{Name: "big", Description: "Returns a megabyte.", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			if err := recordRun(ctx, counter, c); err != nil {
				return nil, err
			}
			line := strings.Repeat("x", 99) + "\n"
			return harness.TextResult(strings.Repeat(line, bigBytes/len(line))), nil
		},
	}
}

// recordRun appends the call's ranKey to the counter file and, when the
// worker that runs it is named (see workerKey), the worker's name and the
// key to the counter's ".workers" file.
func recordRun(ctx context.Context, counter string, c *harness.ToolCall) error {
	if err := appendLine(counter, ranKey(ctx, c)); err != nil {
		return err
	}
	if name, ok := ctx.Value(workerKey{}).(string); ok {
		return appendLine(counter+".workers", name+" "+ranKey(ctx, c))
	}
	return nil
}

// workerKey is the key of a worker's name in the context of its
// activities (worker.Options.BackgroundActivityContext), so the tools say
// which worker ran each call.
type workerKey struct{}

// ranKey names a call across conversations: conversation/call id.
func ranKey(ctx context.Context, c *harness.ToolCall) string {
	info, _ := harness.CallInfoFrom(ctx)
	return info.Conversation + "/" + c.ID
}

func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// counts reads the counter file: how many times each call id ran.
func counts(t *testing.T, dir string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "counter"))
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, l := range strings.Fields(string(b)) {
		n[l]++
	}
	return n
}

// scriptModel answers from the request alone, so a model call repeated on
// another worker gets the same reply: rounds 1 and 2 of a turn make two
// count calls each, round 3 one big call, round 4 answers.
func scriptModel(_ context.Context, req *harness.Request) (*harness.Response, error) {
	done := 0
	for _, m := range req.Messages {
		switch m.Role {
		case harness.RoleUser:
			done = 0
		case harness.RoleAssistant:
			done++
		}
	}
	usage := harness.Usage{Input: 10 * len(req.Messages), Output: 5}
	msg := harness.Message{Role: harness.RoleAssistant}
	switch {
	case done < 2 && !req.Final:
		msg.Parts = []harness.Part{harness.TextPart(fmt.Sprintf("counting, round %d", done+1))}
		for i := range 2 {
			msg.ToolCalls = append(msg.ToolCalls, harness.ToolCall{Name: "count", Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, 2*done+i))})
		}
	case done == 2 && !req.Final:
		msg.ToolCalls = []harness.ToolCall{{Name: "big", Args: json.RawMessage(`{}`)}}
	default:
		msg.Parts = []harness.Part{harness.TextPart(fmt.Sprintf("done after %d messages", len(req.Messages)))}
	}
	return &harness.Response{Message: msg, Usage: usage}, nil
}

// blocker stops this process at one point of a turn and says so on
// stdout, so the parent test acts exactly there: "model:N" inside the Nth
// model call, "stored:N" after the Nth tool result is journalled and
// before its activity reports completion. It stops dead (the parent kills
// the process) unless the spec ends in ":pause": then it waits for the
// parent's "go" on stdin (see childWorker) and goes on.
type blocker struct {
	kind  string
	at    int
	pause bool
	// release is closed when the parent says go.
	release chan struct{}

	mu sync.Mutex
	n  int
}

func parseBlocker(s string) *blocker {
	parts := strings.Split(s, ":")
	if len(parts) < 2 {
		return nil
	}
	b := &blocker{kind: parts[0], pause: len(parts) > 2 && parts[2] == "pause", release: make(chan struct{})}
	fmt.Sscan(parts[1], &b.at)
	return b
}

// hit counts one event of kind and stops on the at-th.
func (b *blocker) hit(ctx context.Context, kind string) {
	if kind != b.kind {
		return
	}
	b.mu.Lock()
	b.n++
	n := b.n
	b.mu.Unlock()
	if n == b.at {
		fmt.Printf("BLOCKED %s:%d\n", kind, n)
		os.Stdout.Sync()
		if b.pause {
			<-b.release
			return
		}
		<-ctx.Done()
		select {} // never report: the parent kills this process
	}
}

func (b *blocker) model(m harness.Model) harness.Model {
	return harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		b.hit(ctx, "model")
		return m.Generate(ctx, req)
	})
}

func (b *blocker) journal(j htemporal.Journal) htemporal.Journal { return &blockingJournal{j, b} }

type blockingJournal struct {
	htemporal.Journal
	b *blocker
}

func (j *blockingJournal) Put(ctx context.Context, k htemporal.Key, v []byte) ([]byte, error) {
	out, err := j.Journal.Put(ctx, k, v)
	if err == nil && strings.HasPrefix(k.Name, "call:") {
		j.b.hit(ctx, "stored")
	}
	return out, err
}

// Environment of a worker child process (see TestMain).
const (
	envWorker    = "HARNESS_TEMPORAL_TEST_WORKER"
	envHostPort  = "HARNESS_TEMPORAL_TEST_HOSTPORT"
	envNamespace = "HARNESS_TEMPORAL_TEST_NAMESPACE"
	envQueue     = "HARNESS_TEMPORAL_TEST_QUEUE"
	envBlock     = "HARNESS_TEMPORAL_TEST_BLOCK"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(envWorker); dir != "" {
		if err := childWorker(dir); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	pgServer.Stop()
	os.Exit(code)
}

// pgServer is the throwaway PostgreSQL cluster of the tests that need one
// (Debian's postgresql package: skipped without it, failed when CI is set).
var pgServer pgtest.Server

// usePostgres makes the rigs in dir keep store and journal in a fresh
// database of pgServer.
func usePostgres(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "dsn"), []byte(pgServer.DSN(t)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// childWorker is the worker process the fault tests start and kill: this
// test binary re-executed with envWorker set. It runs until killed (or
// until its stdin closes, so it never outlives the test); a line "go" on
// stdin releases a paused blocker.
func childWorker(dir string) error {
	ctx := context.Background()
	block := parseBlocker(os.Getenv(envBlock))
	r, err := newRig(ctx, dir, block)
	if err != nil {
		return err
	}
	defer r.close()
	c, err := client.Dial(client.Options{HostPort: os.Getenv(envHostPort), Namespace: os.Getenv(envNamespace)})
	if err != nil {
		return err
	}
	defer c.Close()
	w := worker.New(c, os.Getenv(envQueue), htemporal.WorkerOptions(worker.Options{}))
	r.acts.Register(w)
	if err := w.Start(); err != nil {
		return err
	}
	fmt.Println("READY")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() == "go" && block != nil {
			close(block.release)
			block = nil
		}
	}
	w.Stop()
	return nil
}

// hangBound only catches a hang: no test measures speed.
const hangBound = 5 * time.Minute
