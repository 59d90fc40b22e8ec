package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/sqlite"
)

// The end-to-end tests of "harness proxy" run the real agent CLIs (pinned
// in .ci/clients/package.json, installed by .ci/run) against the proxy,
// which forwards to a scripted loopback upstream speaking the provider's
// wire format. The script: read the 300 KB lock file with the shell tool,
// read a small file, then answer. Every connection goes to 127.0.0.1.

const e2eAnswer = "The lock file pins zod at version 3.23.8."

// clientBin returns the path of an installed client, or skips (fails
// under CI=1) with how to install it.
func clientBin(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join("..", "..", ".ci", "clients")
	if d := os.Getenv("HARNESS_CLIENTS_DIR"); d != "" {
		dir = d // a client installed elsewhere (for trying another version)
	}
	p, err := filepath.Abs(filepath.Join(dir, "node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		msg := fmt.Sprintf("%s is not installed (%v): run `npm ci --prefix .ci/clients` (needs npm and the pinned packages)", name, err)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node is not on PATH: %v", err)
		}
		t.Skipf("node is not on PATH: %v", err)
	}
	return p
}

// lockFileText is a deterministic package-lock.json of about 300 KB.
func lockFileText() string {
	var b strings.Builder
	b.WriteString("{\n  \"name\": \"app\",\n  \"lockfileVersion\": 3,\n  \"packages\": {\n")
	for i := 0; b.Len() < 300<<10; i++ {
		name := fmt.Sprintf("pkg-%05d", i)
		version := fmt.Sprintf("%d.%d.%d", i%9+1, i%13, i%7)
		if i == 700 {
			name, version = "zod", "3.23.8"
		}
		fmt.Fprintf(&b, "    \"node_modules/%s\": {\n      \"version\": \"%s\",\n      \"integrity\": \"sha512-%064d\"\n    },\n", name, version, i)
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// stderrLines collects the proxy's standard error and reports its
// listening address.
type stderrLines struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	addr chan string
	sent bool
}

var listenRE = regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)

func (s *stderrLines) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(b)
	if m := listenRE.FindStringSubmatch(s.buf.String()); m != nil && !s.sent {
		s.sent = true
		s.addr <- m[1]
	}
	return len(b), nil
}

func (s *stderrLines) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// e2eRig is a scripted upstream, "harness proxy" in front of it, and a
// workspace holding the lock file.
type e2eRig struct {
	up      *wiretest.Server
	addr    string
	work    string
	db      string
	conv    string // the session's conversation in the store, once checkLockResult found it
	lock    string
	stderr  *stderrLines
	stop    func()
	stopped chan int
}

func startE2E(t *testing.T, script func(wiretest.Request) wiretest.Reply, flags ...string) *e2eRig {
	t.Helper()
	return startE2EUp(t, script, func(string) []string { return flags })
}

// startE2EUp is startE2E with flags made from the upstream's URL (and
// put after --upstream URL, so an --upstream among them replaces it).
func startE2EUp(t *testing.T, script func(wiretest.Request) wiretest.Reply, flagsOf func(upstream string) []string) *e2eRig {
	t.Helper()
	r := &e2eRig{work: t.TempDir(), lock: lockFileText(), stderr: &stderrLines{addr: make(chan string, 1)}, stopped: make(chan int, 1)}
	if err := os.WriteFile(filepath.Join(r.work, "package-lock.json"), []byte(r.lock), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.work, "package.json"), []byte(`{"name":"app","dependencies":{"zod":"^3.23.0"}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.up = wiretest.New(t)
	r.up.Respond = script
	r.db = filepath.Join(t.TempDir(), "harness.db")
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	go func() {
		args := append([]string{"proxy", "--listen", "127.0.0.1:0", "--upstream", r.up.URL, "--db", r.db, "--workspace", r.work}, flagsOf(r.up.URL)...)
		r.stopped <- runMain(ctx, args,
			&env{stdout: &bytes.Buffer{}, stderr: r.stderr, getenv: func(string) string { return "" }})
	}()
	select {
	case r.addr = <-r.stderr.addr:
	case code := <-r.stopped:
		t.Fatalf("harness proxy exited with %d: %s", code, r.stderr.String())
	case <-time.After(5 * time.Minute): // only catches a hang
		t.Fatal("harness proxy did not start")
	}
	t.Cleanup(func() { r.shutdown(t) })
	return r
}

// openStore stops the proxy (which writes what it still holds) and opens
// its store, closed when the test ends.
func (r *e2eRig) openStore(t *testing.T) store.DB {
	t.Helper()
	r.shutdown(t)
	st, err := sqlite.Open(context.Background(), r.db, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// storedConv is a conversation the proxy stored, as the e2e tests read
// it back: its summary, its turns, and whether any request offered tools
// (a client's side requests, such as Gemini CLI's router, offer none).
type storedConv struct {
	store.Summary
	conv    *harness.Conversation
	offered bool
}

// storedConvs stops the proxy and reads back every conversation it
// stored, most recently updated first.
func (r *e2eRig) storedConvs(t *testing.T) []storedConv {
	t.Helper()
	ctx := context.Background()
	st := r.openStore(t)
	list, err := st.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]storedConv, len(list))
	for i, s := range list {
		conv, err := st.Load(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		reqs, err := st.Requests(ctx, s.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = storedConv{Summary: s, conv: conv, offered: slices.ContainsFunc(reqs, func(q store.Request) bool { return len(q.Tools) > 0 })}
	}
	return out
}

// shutdown stops the proxy (recording everything) once.
func (r *e2eRig) shutdown(t *testing.T) {
	if r.stop == nil {
		return
	}
	r.stop()
	r.stop = nil
	if code := <-r.stopped; code != 0 {
		t.Errorf("harness proxy exited with %d: %s", code, r.stderr.String())
	}
}

// runClient runs a client in the workspace with exactly env (plus PATH).
func runClient(t *testing.T, dir string, env []string, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // only catches a hang
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "NO_COLOR=1"}, env...)
	cmd.Stdin = strings.NewReader("")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), err, out.String(), tail(errb.String(), 4000))
	}
	return out.String()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// bodyJSON decodes a request body.
func bodyJSON(t *testing.T, b []byte) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Errorf("upstream got a body that is not JSON: %v", err)
	}
	return m
}

var e2eSpillRE = regexp.MustCompile(`(/[^\s"\\]*\.harness/spill/[^\s"\\]+\.(?:txt|json))`)

// checkLockResult checks the lock file's result as the upstream got it:
// within the ceiling, marked, naming a spill file that holds every byte
// the client sent, which the store holds too. shown is the model copy as
// the upstream got it, in each request that carried it (byte-identical).
// It returns the spill file's text: the result as the client sent it.
func (r *e2eRig) checkLockResult(t *testing.T, shownRaw []string) string {
	t.Helper()
	if d := os.Getenv("E2E_DUMP"); d != "" {
		for i, q := range r.up.Requests() {
			_ = os.WriteFile(filepath.Join(d, fmt.Sprintf("up%d.json", i)), q.Body, 0o644)
		}
	}
	if len(shownRaw) < 2 {
		t.Fatalf("the lock file's result reached the upstream in %d request(s), want at least 2", len(shownRaw))
	}
	for i, s := range shownRaw[1:] {
		if s != shownRaw[0] {
			t.Errorf("request %d carried the lock file's result with different bytes (cache break)", i+2)
		}
	}
	var shown string
	if err := json.Unmarshal([]byte(shownRaw[0]), &shown); err != nil {
		t.Fatalf("the lock file's content is not a JSON string: %v", err)
	}
	if len(shown) > guard.DefaultMaxBytes {
		t.Errorf("the model copy is %d bytes, over the %d-byte ceiling", len(shown), guard.DefaultMaxBytes)
	}
	if !strings.Contains(shown, "[harness:") {
		t.Errorf("the model copy (%d bytes) carries no marker; the proxy logged:\n%s", len(shown), r.stderr.String())
	}
	m := e2eSpillRE.FindStringSubmatch(shown)
	if m == nil {
		t.Fatalf("the marker names no spill file:\n%s", tail(shown, 1500))
	}
	spilled, err := os.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m[1], r.work) {
		t.Errorf("spill file %s is not under the workspace %s", m[1], r.work)
	}
	st := r.openStore(t)
	list, err := st.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	found, foundID := false, ""
	for _, s := range list {
		conv, err := st.LoadFull(context.Background(), s.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, turn := range conv.Turns {
			for _, round := range turn.Rounds {
				for _, res := range round.Results {
					if len(res.Cuts) > 0 && res.FullText() == string(spilled) {
						found, foundID, r.conv = true, s.ID, s.ID
						if turn.Answer() != "" && !strings.Contains(turn.Answer(), e2eAnswer) {
							t.Errorf("stored answer %q", turn.Answer())
						}
					}
				}
			}
		}
	}
	if !found {
		t.Errorf("the store holds no cut result whose full text is the spill file's %d bytes", len(spilled))
	}
	if found {
		checkCLIReads(t, r.db, foundID)
	}
	t.Logf("what the proxy logged (bytes as received → as sent upstream):\n%s", r.stderr.String())
	lockLines := strings.Count(r.lock, "\n")
	t.Logf("lock file %d bytes (%d lines); the client sent %d bytes of it; the upstream got %d bytes; spill %s",
		len(r.lock), lockLines, len(spilled), len(shown), m[1])
	if !strings.Contains(string(spilled), `"node_modules/zod"`) && len(spilled) > 0 {
		t.Logf("note: the client itself sent only part of the lock file (its own output limit or read range)")
	}
	return string(spilled)
}

// checkCLIReads runs the commands that read a store on the proxied one:
// each must succeed and name the lock-file call.
func checkCLIReads(t *testing.T, db, id string) {
	t.Helper()
	checkCLIReadsCall(t, db, id, "call_lock")
}

// checkCLIReadsCall is checkCLIReads for a conversation whose log must
// show the call callID.
func checkCLIReadsCall(t *testing.T, db, id, callID string) {
	t.Helper()
	for _, args := range [][]string{
		{"log", "list", "--db", db},
		{"log", "show", id, "--db", db},
		{"audit", db},
		{"bench", "--presets", "none,harness", db},
	} {
		var out, errb bytes.Buffer
		code := runMain(context.Background(), args, &env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }})
		if code != 0 {
			t.Errorf("harness %s: exit %d: %s", strings.Join(args, " "), code, tail(errb.String(), 2000))
			continue
		}
		if args[0] == "log" && args[1] == "show" && !strings.Contains(out.String(), callID) {
			t.Errorf("harness log show does not show the call %s:\n%s", callID, tail(out.String(), 2000))
		}
	}
}
