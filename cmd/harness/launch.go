package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/internal/numfmt"
	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/proxy"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/sqlite"
)

// exitCode is an error that carries the exit code of a client the
// launcher ran: runMain exits with it and prints nothing.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit status %d", int(c)) }

// launchCommand is the "harness CLIENT" command of a client.
func launchCommand(c launchClient) command {
	return command{name: c.name, summary: c.summary, run: func(ctx context.Context, e *env, args []string) error {
		return launch(ctx, e, c, args)
	}}
}

// launch runs the client c with args through a proxy started for the run
// (or the one HARNESS_PROXY names): every argument is the client's, the
// terminal is the client's, and the exit code is the client's. The proxy
// keeps its store and spill files in the working directory's .harness/,
// where the client's own read tool may page them, and logs to
// .harness/proxy.log so an interactive client's screen stays its own.
func launch(ctx context.Context, e *env, c launchClient, args []string) error {
	bin, err := exec.LookPath(c.name)
	if err != nil {
		return fmt.Errorf("%s is not on PATH (%w): install it first, then run harness %s with the arguments you give %s", c.name, err, c.name, c.name)
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	proxies := map[string]string{}
	if reuse := strings.TrimRight(strings.TrimSpace(e.getenv("HARNESS_PROXY")), "/"); reuse != "" {
		for _, p := range c.providers {
			proxies[p.name] = reuse
		}
		fmt.Fprintf(e.stderr, "harness: %s through the running proxy at %s (HARNESS_PROXY)\n", c.name, reuse)
		return runLaunched(ctx, e, c, bin, args, proxies)
	}
	run, err := startLaunchProxies(ctx, e, c, wd)
	if err != nil {
		return err
	}
	for _, p := range c.providers {
		proxies[p.name] = run.urls[p.name]
	}
	if c.grant != nil {
		args = append(c.grant(run.spillRoot), args...)
	}
	since := time.Now()
	cerr := runLaunched(ctx, e, c, bin, args, proxies)
	run.close(e, since)
	return cerr
}

// runLaunched runs the client with the environment and arguments that point
// it at the proxies, forwarding termination signals, and returns its exit
// status as an exitCode (nil for 0).
func runLaunched(ctx context.Context, e *env, c launchClient, bin string, args []string, proxies map[string]string) error {
	env, lead, err := c.point(e.getenv, proxies)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, append(lead, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = launchStdio(e)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", bin, err)
	}
	// The terminal sends Ctrl-C to the client itself (same process
	// group); harness ignores it and lives until the client ends. Other
	// termination signals are passed on.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			_ = cmd.Process.Signal(s)
		case err := <-done:
			var ee *exec.ExitError
			switch {
			case err == nil:
				return nil
			case errors.As(err, &ee):
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					return exitCode(128 + int(ws.Signal()))
				}
				return exitCode(ee.ExitCode())
			}
			return fmt.Errorf("%s: %w", c.name, err)
		}
	}
}

// launchStdio is the client's standard streams: the process's own when
// harness runs as a command (so an interactive client gets the terminal),
// the env's in tests.
func launchStdio(e *env) (io.Reader, io.Writer, io.Writer) {
	if e.stdin == os.Stdin && e.stdout == os.Stdout && e.stderr == os.Stderr {
		return os.Stdin, os.Stdout, os.Stderr
	}
	return e.stdin, e.stdout, e.stderr
}

// launchRun is the proxies a launch started, one per provider of the
// client, sharing one store.
type launchRun struct {
	urls map[string]string
	// spillRoot is the folder whose .harness/spill/ receives spill files.
	spillRoot string
	st        transcriptStore
	logf      *os.File
	stops     []func()
}

// startLaunchProxies starts, on loopback ports the system picks, one proxy
// for each of c's providers, recording to wd/.harness/harness.db and
// spilling under wd/.harness/spill/ (or, for a client with a grant, under
// a folder of the user's cache named after the project).
func startLaunchProxies(ctx context.Context, e *env, c launchClient, wd string) (*launchRun, error) {
	dir := filepath.Join(wd, ".harness")
	if err := ensureHarnessDir(dir); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(filepath.Join(dir, "proxy.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the proxy's log: %w", err)
	}
	st, err := openDB(ctx, filepath.Join(wd, filepath.FromSlash(sqlite.DefaultPath)), wd, false)
	if err != nil {
		logf.Close()
		return nil, err
	}
	run := &launchRun{urls: map[string]string{}, st: st, logf: logf, spillRoot: wd}
	if c.grant != nil {
		if run.spillRoot, err = outsideSpillRoot(wd); err != nil {
			run.close(nil, time.Time{})
			return nil, err
		}
	}
	for _, p := range c.providers {
		var configured string
		if c.configured != nil {
			configured = c.configured(e.getenv, p)
		}
		up := p.upstream(e.getenv, configured)
		url, stop, err := serveLaunchProxy(ctx, st, run.spillRoot, up, logf)
		if err != nil {
			run.close(nil, time.Time{})
			return nil, fmt.Errorf("the proxy for %s (upstream %s): %w", p.name, redactURL(up), err)
		}
		run.urls[p.name] = url
		run.stops = append(run.stops, stop)
		fmt.Fprintf(e.stderr, "harness: %s's %s calls go through %s to %s; log in %s\n", c.name, p.name, url, redactURL(up), filepath.Join(".harness", "proxy.log"))
	}
	return run, nil
}

// serveLaunchProxy serves one proxy to upstream on a loopback port,
// spilling under spillRoot/.harness/spill/, and returns its URL and the
// function that stops it.
func serveLaunchProxy(ctx context.Context, st transcriptStore, spillRoot, upstream string, log io.Writer) (string, func(), error) {
	opts := &proxy.Options{Upstream: upstream, Store: st, Workspace: spillRoot, Log: log,
		MaxRequestBytes: proxy.DefaultMaxRequestBytes, MaxResponseBytes: proxy.DefaultMaxResponseBytes}
	opts.Stack = proxyStackConfig(spillRoot, guard.DefaultMaxBytes, guard.DefaultRunCeilingBytes, policy.DefaultTurnChars, false)
	px, err := proxy.New(opts)
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := serveProxy(sctx, &http.Server{Handler: px, ReadHeaderTimeout: time.Minute}, ln, px); err != nil {
			fmt.Fprintf(log, "harness proxy: %v\n", err)
		}
	}()
	return "http://" + ln.Addr().String(), func() { cancel(); <-done }, nil
}

// close stops the proxies (each waits until what it saw is recorded),
// prints what they saved during the run when e is set, and closes the
// store and the log.
func (r *launchRun) close(e *env, since time.Time) {
	for _, stop := range r.stops {
		stop()
	}
	if e != nil {
		if sl, ok := r.st.(store.SavingsLog); ok {
			if rows, err := sl.Savings(context.Background(), since); err == nil && len(rows) > 0 {
				rep := proxy.SummarizeSavings(rows, nil, time.Local)
				fmt.Fprintf(e.stderr, "harness: %d model calls, %s tokens of tool output removed (%.1f%% of the input, about $%.2f at list prices); harness savings shows every day, harness log list every conversation\n",
					rep.Calls, numfmt.Thousands(rep.TokensSaved), 100*rep.SavedShare, rep.DollarsSaved)
			}
		}
	}
	r.st.Close()
	r.logf.Close()
}

// ensureHarnessDir creates dir (a workspace's .harness) with a .gitignore
// that ignores everything in it, so the store, spill files and log never
// show in git status.
func ensureHarnessDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	gi := filepath.Join(dir, ".gitignore")
	if _, err := os.Lstat(gi); err == nil {
		return nil
	}
	if err := os.WriteFile(gi, []byte("# harness's store, spill files and logs: local, never committed\n*\n"), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", gi, err)
	}
	return nil
}

// redactURL is u as the launcher prints it: no user information and no
// query, where a credential may ride.
func redactURL(u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return "(an unparsable URL)"
	}
	pu.User, pu.RawQuery, pu.Fragment = nil, "", ""
	return pu.String()
}

// outsideSpillRoot is the folder, in the user's cache and named after the
// project wd, that spills go under for a client that may not read its
// project's git-ignored files; created 0700.
func outsideSpillRoot(wd string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding a folder for spill files outside the project: %w", err)
	}
	sum := sha256.Sum256([]byte(wd))
	dir := filepath.Join(cache, "harness", filepath.Base(wd)+"-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating %s for spill files: %w", dir, err)
	}
	return dir, nil
}
