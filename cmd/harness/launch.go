package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/agentharness/harness/internal/harnessdir"
	"github.com/agentharness/harness/proxy"
	"github.com/agentharness/harness/spill"
	"github.com/agentharness/harness/store/sqlite"
)

const launchSummary = `Runs %[1]s, found on PATH, with harness in front of it: a proxy on a loopback
port for this run only, the client pointed at it for this process only
(%[2]s), forwarding to the client's own base URL when it sets one (%[3]s)
and to the provider's public endpoint otherwise. Every argument goes to
%[1]s as it is; the terminal, the signals and the exit code are the
client's. Tool results are cut as "harness proxy" cuts them; the spill files
go to .harness/spill/ in the folder it was started from (git-ignored), where
the client reads them with its own %[4]s tool without asking%[5]s, and the
conversation is recorded in .harness/harness.db there (HARNESS_DB names
another store). HARNESS_PROXY=URL reuses a running "harness proxy" on this
machine instead (the client's route registered there; its upstream and
store apply). The client's own output caps are left as they are: Codex's
10 KB per output and Claude Code's Read and shell limits are below or near
the 24 KiB ceiling, so raising them would send the model more, not less.
"harness %[1]s -h" prints this; "harness %[1]s --help" is %[1]s's own help.`

// launchCommands are the launchers, one per client.
func launchCommands() []command {
	var out []command
	for _, c := range launchClients() {
		out = append(out, command{name: c.name, summary: "run " + c.name + " (on PATH) with harness in front of it: harness " + c.name + " [" + c.name + " arguments…]",
			run: func(ctx context.Context, e *env, args []string) error { return launch(ctx, e, c, args) }})
	}
	return out
}

// launchHelp is the text of harness CLIENT -h.
func launchHelp(c launchClient) string {
	how := map[string]string{"claude": "ANTHROPIC_BASE_URL", "codex": "-c openai_base_url=…",
		"gemini": "GOOGLE_GEMINI_BASE_URL with an API key, CODE_ASSIST_ENDPOINT signed in with Google", "opencode": "OPENCODE_CONFIG_CONTENT's provider baseURL"}[c.name]
	own := map[string]string{"claude": "ANTHROPIC_BASE_URL", "codex": "OPENAI_BASE_URL, or openai_base_url in ~/.codex/config.toml",
		"gemini": "GOOGLE_GEMINI_BASE_URL, CODE_ASSIST_ENDPOINT", "opencode": "the providers' baseURL in OPENCODE_CONFIG_CONTENT"}[c.name]
	grant := ""
	if c.grant != nil {
		grant = " (" + c.name + " refuses git-ignored files: its spill files go to\n~/.cache/harness/projects/, which the launcher lets it read with " + c.grant("DIR")[0] + ")"
	}
	return fmt.Sprintf(launchSummary, c.name, how, own, c.readTool, grant)
}

// exitStatus is a launched client's exit code, which harness exits with.
type exitStatus int

func (s exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(s)) }

// launch runs one client through a proxy started for the run.
func launch(ctx context.Context, e *env, c launchClient, args []string) error {
	if len(args) == 1 && args[0] == "-h" {
		fmt.Fprintf(e.stdout, "usage: harness %s [%s arguments…]\n\n%s\n", c.name, c.name, launchHelp(c))
		return nil
	}
	bin, err := exec.LookPath(c.name)
	if err != nil {
		return fmt.Errorf("%s is not on PATH (%w): install it (npm install -g %s), or put the folder holding it on PATH", c.name, err, c.pkg)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	if c.bypass != nil {
		if why := c.bypass(e.getenv, cwd); why != "" {
			fmt.Fprintf(e.stderr, "harness %s: warning: %s\n", c.name, why)
		}
	}
	if running := e.getenv("HARNESS_PROXY"); running != "" {
		return launchReusing(ctx, e, c, bin, cwd, running, args)
	}
	db := e.getenv("HARNESS_DB")
	if db == "" {
		db = filepath.Join(cwd, filepath.FromSlash(defaultDBPath))
		if err := harnessdir.IgnoreHarness(cwd); err != nil {
			fmt.Fprintf(e.stderr, "harness %s: .harness/.gitignore: %v\n", c.name, err)
		}
	}
	st, err := sqlite.Open(ctx, db, &sqlite.Options{
		OnDelete: func(ctx context.Context, id string) error { return spill.RemoveConversation(cwd, id) },
	})
	if err != nil {
		return err
	}
	defer st.Close()
	opts := &proxy.Options{Upstream: launchUpstream(c, e.getenv), Store: st, Workspace: cwd}
	px, err := proxy.New(opts)
	if err != nil {
		return fmt.Errorf("%s's base URL: %w", c.name, upstreamUsage(err))
	}
	client, pre, err := launchRouteClient(e, c, cwd)
	if err != nil {
		return err
	}
	prefix, err := px.Route(client)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: px, ReadHeaderTimeout: time.Minute}
	serveCtx, stopServe := context.WithCancel(context.WithoutCancel(ctx))
	served := make(chan error, 1)
	go func() { served <- serveProxy(serveCtx, srv, ln, px) }()
	code, runErr := runLaunched(e, c, bin, "http://"+ln.Addr().String()+prefix, append(pre, args...))
	stopServe()
	if err := <-served; err != nil && runErr == nil {
		fmt.Fprintf(e.stderr, "harness %s: recording: %v\n", c.name, err)
	}
	return launchResult(code, runErr)
}

// launchReusing runs c pointed at the running harness proxy at running
// (HARNESS_PROXY) instead of a proxy of its own: its route registered
// there, the spill files where c reads them; the running proxy's upstream
// and store apply.
func launchReusing(ctx context.Context, e *env, c launchClient, bin, cwd, running string, args []string) error {
	client, pre, err := launchRouteClient(e, c, cwd)
	if err != nil {
		return err
	}
	base, err := registerRoute(ctx, running, client)
	if err != nil {
		return err
	}
	if err := harnessdir.IgnoreHarness(cwd); err != nil {
		fmt.Fprintf(e.stderr, "harness %s: .harness/.gitignore: %v\n", c.name, err)
	}
	return launchResult(runLaunched(e, c, bin, base, append(pre, args...)))
}

// launchRouteClient is c's route: its spill files under the project cwd,
// or, for a client that cannot read git-ignored files, under a folder of
// harness's own that the arguments pre let it read.
func launchRouteClient(e *env, c launchClient, cwd string) (client proxy.Client, pre []string, err error) {
	spillWS := cwd
	if c.grant != nil {
		if spillWS, err = outsideSpillRoot(e.getenv, cwd); err != nil {
			return proxy.Client{}, nil, err
		}
		pre = c.grant(spillWS)
	}
	return proxy.Client{Name: c.name, Workspace: spillWS, ReadTool: c.readTool}, pre, nil
}

// launchResult is launch's error for a client that exited with code, or
// could not be run (runErr).
func launchResult(code int, runErr error) error {
	if runErr != nil {
		return runErr
	}
	if code != 0 {
		return exitStatus(code)
	}
	return nil
}

// outsideSpillRoot is the folder, outside the project, whose
// .harness/spill/ receives the spill files of a client that cannot read
// git-ignored files: the user's cache folder ($XDG_CACHE_HOME, else
// ~/.cache), harness/projects/<project folder's name>-<hash of its path>.
func outsideSpillRoot(getenv func(string) string, project string) (string, error) {
	cache := getenv("XDG_CACHE_HOME")
	if cache == "" {
		home := getenv("HOME")
		if home == "" {
			return "", errors.New("no HOME nor XDG_CACHE_HOME to keep spill files in")
		}
		cache = filepath.Join(home, ".cache")
	}
	sum := sha256.Sum256([]byte(project))
	dir := filepath.Join(cache, "harness", "projects", filepath.Base(project)+"-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("spill folder: %w", err)
	}
	return dir, nil
}

// launchUpstream is the proxy's upstream for c: the client's own base URL
// for its provider, the public endpoints for the rest. A client that may
// call any provider (c.api "") gives the whole list itself.
func launchUpstream(c launchClient, getenv func(string) string) string {
	u := c.upstream(getenv)
	if u == "" || c.api == "" {
		return u
	}
	return c.api + "=" + u
}

// runLaunched runs the client on the terminal with base as its model
// endpoint and returns its exit code. SIGTERM and SIGHUP sent to harness
// are passed on; an interrupt from the terminal reaches the client by
// itself (it is in the terminal's foreground process group), so harness
// only outlives it.
func runLaunched(e *env, c launchClient, bin, base string, args []string) (int, error) {
	extraEnv, pre := c.point(base, e.getenv)
	cmd := exec.Command(bin, append(pre, args...)...)
	cmd.Env = append(os.Environ(), extraEnv...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.stdout, e.stderr
	if cmd.Stdin == nil {
		cmd.Stdin = os.Stdin
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP, os.Interrupt)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting %s: %w", c.name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			if s != os.Interrupt {
				_ = cmd.Process.Signal(s)
			}
		case err := <-done:
			var ee *exec.ExitError
			switch {
			case err == nil:
				return 0, nil
			case errors.As(err, &ee):
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					return 128 + int(ws.Signal()), nil
				}
				return ee.ExitCode(), nil
			}
			return 0, fmt.Errorf("%s: %w", c.name, err)
		}
	}
}
