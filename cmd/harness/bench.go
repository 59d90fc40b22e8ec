package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/bench/data"
	"github.com/agentharness/harness/internal/benchcore"
	"github.com/agentharness/harness/provider/catalog"
	"github.com/agentharness/harness/replay"
)

// cmdBench compares the presets on a folder of transcripts, or on the
// built-in scenario suite.
func cmdBench(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "bench", "[DIR|FILE…]", "Replay transcripts under every policy preset and compare effective tokens (uncached + 0.1 × cached\n"+
		"+ 4 × output), the ratio to keeping everything, the cached share and evidence retention. Transcripts\n"+
		"are Claude Code sessions, Codex CLI rollouts, SWE-agent, mini-swe-agent and OpenHands trajectories, Gemini CLI\n"+
		"chats, OpenAI or Anthropic message lists (or Responses input), harness conversations or harness's store (.db: every conversation in it),\n"+
		"recognised by content; folders are read recursively. With no argument it replays the real recorded runs harness\n"+
		"ships (bench/data: one table per agent), then the built-in scenario suite (--suite alone), under harness, the\n"+
		"other systems' rules and the bound floor (--presets all adds harness-proxy). A recording is\n"+
		"output-heavy when its largest tool result is at least 10,000 characters and a third of all its\n"+
		"result characters; --per-run shows the figures of each recording and sums the output-heavy ones.\n\n"+
		"Columns:\n"+benchcore.ColumnNotes)
	jsonOut := fs.Bool("json", false, "print the table as JSON (always with each recording's figures and its output weight)")
	perRun := fs.Bool("per-run", false, "also sum the output-heavy recordings apart, and print one line per recording and preset")
	cuts := fs.Bool("cuts", false, "with --per-run's lines, one line per result each preset cut: how, what hiding it saved and what reading\n"+
		"it back cost (in --json, each run's cuts)")
	presets := fs.String("presets", "", "comma-separated presets to run, or all (default all policies and the bounds \"floor\" and \"oracle\"; with no\n"+
		"argument harness, the other systems and the bounds; none is always included)")
	pricing := fs.String("pricing", "", "comma-separated price models the text shows (openai, openai-4.1, anthropic, nocache; default openai,anthropic;\n"+
		"the JSON carries every one)")
	db := fs.String("db", "", "also read every conversation of this transcript store (a file, or a postgres:// URL)")
	ttl := cacheTTLFlag(fs)
	real := fs.Bool("real", false, "what no argument does: the real recorded runs harness ships (mini-swe-agent, Claude Code, Codex and\n"+
		"SWE-agent runs cut from openly licensed sets, licences beside them), one table per agent, then the suite")
	suite := fs.Bool("suite", false, "replay the built-in scenario suite only")
	through := fs.String("through", "", "also replay every recording through the OpenAI-compatible proxy at this base URL\n"+
		"(http://127.0.0.1:8787/v1) and add a row measuring what reached the recording upstream")
	throughUp := fs.String("through-upstream", "127.0.0.1:8399", "loopback address the --through recording upstream listens on: point the proxy's upstream at it")
	sf := addSupplyFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	ps, err := pickPresets(*presets)
	if err != nil {
		return err
	}
	prices, err := pickPricings(*pricing)
	if err != nil {
		return err
	}
	*perRun = *perRun || *cuts
	mainJob := len(pos) == 0 && *db == "" && !*suite && *through == ""
	switch {
	case *real && len(pos) > 0:
		return fmt.Errorf("%w: --real replays the shipped runs and takes no FILE or DIR", errUsage)
	case *real && *through != "":
		return fmt.Errorf("%w: --through measures the recordings named or the suite, not --real", errUsage)
	case *suite && (len(pos) > 0 || *db != "" || *real):
		return fmt.Errorf("%w: --suite replays the built-in suite alone, without FILE, DIR, --db or --real", errUsage)
	case *real || mainJob:
		if *presets == "" {
			ps = mainPresets()
		}
		opts, err := cacheOptions(&bench.Options{Presets: ps, Cuts: *cuts}, *ttl)
		if err != nil {
			return err
		}
		return benchMain(ctx, e, sf, opts, prices, *jsonOut, *perRun)
	}
	opts, err := cacheOptions(&bench.Options{Presets: ps, Progress: progressBar(e.stderr), Cuts: *cuts}, *ttl)
	if err != nil {
		return err
	}
	th, err := throughOption(ctx, e, *through, *throughUp)
	if err != nil {
		return err
	}
	opts.Through = th
	tab, err := benchTable(ctx, e, sf, pos, *db, opts)
	if err != nil {
		if th != nil {
			th.Listener.Close()
		}
		return err
	}
	tab.Pricings = prices
	if *jsonOut {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(tab)
	}
	if *perRun {
		return tab.WritePerRun(e.stdout)
	}
	return tab.WriteText(e.stdout)
}

// benchTable replays the transcripts at pos as they are read (benchFiles),
// or those and the conversations of the store db, or the suite.
func benchTable(ctx context.Context, e *env, sf *supplyFlags, pos []string, db string, opts *bench.Options) (*bench.Table, error) {
	if len(pos) > 0 && db == "" {
		return benchFiles(ctx, e, sf, pos, opts)
	}
	recs, err := loadOrSuite(ctx, e, sf, pos, false, db)
	if err != nil {
		return nil, err
	}
	return bench.Run(ctx, recs, opts)
}

// benchFiles replays the transcripts at pos as they are read
// (replay.LoadEach into bench.RunEach), so a few files are held at a time,
// not every recording; what load prints before replaying (skipped files,
// warnings) is printed once every file is read, the same lines.
func benchFiles(ctx context.Context, e *env, sf *supplyFlags, pos []string, opts *bench.Options) (*bench.Table, error) {
	if err := checkPaths(pos); err != nil {
		return nil, err
	}
	supply, err := sf.supply()
	if err != nil {
		return nil, err
	}
	var (
		seen    []*replay.Recording // what printWarnings reads of each: source and warnings
		skipped []replay.Skipped
	)
	src := func(ctx context.Context, yield func(*replay.Recording) error) error {
		var err error
		skipped, err = replay.LoadEach(ctx, supply, pos, func(r *replay.Recording) error {
			seen = append(seen, &replay.Recording{Source: r.Source, Warnings: r.Warnings})
			return yield(r)
		})
		return err
	}
	tab, err := bench.RunEach(ctx, src, 0, opts)
	if rerr := reportSkipped(e, pos, skipped, len(seen)); err == nil && rerr != nil {
		return nil, rerr
	}
	if err != nil {
		return nil, err
	}
	printWarnings(e, seen)
	return tab, nil
}

// loadOrSuite imports the transcripts at pos (see load) and every
// conversation of the store db, or generates the built-in suite when both
// are empty.
func loadOrSuite(ctx context.Context, e *env, sf *supplyFlags, pos []string, summary bool, db string) ([]*replay.Recording, error) {
	if len(pos) == 0 && db == "" {
		return bench.Suite()
	}
	supply, err := sf.supply()
	if err != nil {
		return nil, err
	}
	var recs []*replay.Recording
	if len(pos) > 0 {
		if recs, err = load(ctx, e, supply, pos, summary); err != nil {
			return nil, err
		}
	}
	if db != "" {
		more, err := dbRecordings(ctx, db)
		if err != nil {
			return nil, fmt.Errorf("--db: %w", err)
		}
		if len(more) == 0 {
			return nil, errors.New("no conversation could be read from the store named by --db")
		}
		printWarnings(e, more)
		recs = append(recs, more...)
	}
	return recs, nil
}

func pickPresets(list string) ([]bench.Preset, error) {
	if list == "" || list == "all" {
		return nil, nil
	}
	var out []bench.Preset
	for _, n := range strings.Split(list, ",") {
		p, err := bench.Lookup(strings.TrimSpace(n))
		if err != nil {
			// The command's name already says bench.
			return nil, fmt.Errorf("%w: %s", errUsage, strings.TrimPrefix(err.Error(), "bench: "))
		}
		out = append(out, p)
	}
	return out, nil
}

// cacheTTLFlag registers --cache-ttl (bench.Options.CacheTTL; 0 is
// bench.Options.NoCacheExpiry).
func cacheTTLFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("cache-ttl", catalog.DefaultCacheLifetime, "how long the provider's prompt cache outlives its last use: a request more than this after the one before (by the\n"+
		"times Claude Code, Codex and Gemini CLI record) pays its prefix uncached, under every preset. The default is Anthropic's default lifetime\n"+
		"and the shortest OpenAI documents; 1h prices Anthropic's 1-hour cache and OpenAI's longest automatic one; 0 a warm cache that never expires.\n"+
		"The presets that clear once the cache has gone cold wait at least this long (none clears so when it never expires)")
}

// cacheOptions sets opts' cache pricing from --cache-ttl, refusing a
// negative lifetime.
func cacheOptions(opts *bench.Options, ttl time.Duration) (*bench.Options, error) {
	if ttl < 0 {
		return nil, fmt.Errorf("%w: --cache-ttl %v: want a lifetime ≥ 0 (0: the cache never expires)", errUsage, ttl)
	}
	opts.CacheTTL, opts.NoCacheExpiry = ttl, ttl == 0
	return opts, nil
}

// pickPricings checks --pricing (see benchcore.ParsePricings).
func pickPricings(list string) ([]string, error) {
	out, err := benchcore.ParsePricings(list)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", errUsage, strings.TrimPrefix(err.Error(), "bench: "))
	}
	return out, nil
}

// progressBar returns a progress callback drawing a bar on w when w is a
// terminal, and nil otherwise (pipes and files get no control characters).
func progressBar(w io.Writer) func(done, total int) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return func(done, total int) {
		const width = 30
		n := width * done / max(total, 1)
		fmt.Fprintf(w, "\r[%s%s] %d/%d replays", strings.Repeat("#", n), strings.Repeat(".", width-n), done, total)
		if done == total {
			fmt.Fprint(w, "\r\033[K")
		}
	}
}

// mainPresets are the presets of the main job (bench with no argument):
// harness's defaults, every other system's rules and the bounds (floor, oracle),
// without the opt-in presets (harness-proxy), which --presets all adds.
func mainPresets() []bench.Preset {
	var out []bench.Preset
	for _, p := range append(bench.Presets(), bench.References()...) {
		if !p.OptIn {
			out = append(out, p)
		}
	}
	return out
}

// benchMain is the main job: the shipped real runs (bench/data), one
// table per agent, each headed by the agent, its recordings and where
// they are, then the built-in suite's table. The JSON is one table per
// agent and "suite".
func benchMain(ctx context.Context, e *env, sf *supplyFlags, opts *bench.Options, prices []string, jsonOut, perRun bool) error {
	supply, err := sf.supply()
	if err != nil {
		return err
	}
	tables := map[string]*bench.Table{}
	show := func(name, head string, recs []*replay.Recording) error {
		o := *opts
		o.Progress = progressBar(e.stderr)
		tab, err := bench.Run(ctx, recs, &o)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		tab.Pricings = prices
		if jsonOut {
			tables[name] = tab
			return nil
		}
		fmt.Fprintln(e.stdout, head)
		write := tab.WriteText
		if perRun {
			write = tab.WritePerRun
		}
		if err := write(e.stdout); err != nil {
			return err
		}
		fmt.Fprintln(e.stdout)
		return nil
	}
	for _, agent := range data.Agents() {
		recs, err := data.Load(ctx, agent)
		if err != nil {
			return err
		}
		for _, r := range recs {
			supply.Apply(r)
		}
		head := fmt.Sprintf("== %s, real recorded runs: %d model contexts from %d files (bench/data/%s)", agent, len(recs), len(data.Files(agent)), agent)
		if err := show(agent, head, recs); err != nil {
			return err
		}
	}
	recs, err := bench.Suite()
	if err != nil {
		return err
	}
	head := fmt.Sprintf("== built-in scenario suite: %d scenarios generated from typical agent runs (our own, where our policies look best; --suite alone)", len(recs))
	if err := show("suite", head, recs); err != nil {
		return err
	}
	if jsonOut {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(tables)
	}
	return nil
}

// throughOption checks --through (something answers there) and
// --through-upstream, and starts listening for the recording upstream
// (nil when --through is not given).
func throughOption(ctx context.Context, e *env, through, upstream string) (*bench.Through, error) {
	if through == "" {
		return nil, nil
	}
	u, err := url.Parse(through)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: --through %q is not an http(s) URL", errUsage, through)
	}
	host, _, err := net.SplitHostPort(upstream)
	if err != nil {
		return nil, fmt.Errorf("%w: --through-upstream %q: %v", errUsage, upstream, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("%w: --through-upstream %q is not a loopback address", errUsage, upstream)
	}
	if err := dialable(ctx, u); err != nil {
		return nil, fmt.Errorf("--through %s: nothing answers there (%v); start the proxy first, forwarding to the recording upstream: "+
			"harness proxy --listen %s --upstream http://%s", through, err, u.Host, upstream)
	}
	ln, err := net.Listen("tcp", upstream)
	if err != nil {
		return nil, fmt.Errorf("--through-upstream: %w", err)
	}
	fmt.Fprintf(e.stderr, "recording upstream on http://%s; replaying through %s\n", ln.Addr(), through)
	return &bench.Through{URL: through, Listener: ln}, nil
}

// dialable checks that something accepts a connection at u's host (its
// scheme's port when it names none). The timeout only catches a host that
// never answers.
func dialable(ctx context.Context, u *url.URL) error {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	c, err := (&net.Dialer{Timeout: time.Minute}).DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return err
	}
	return c.Close()
}
