package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentharness/harness/internal/numfmt"
	"github.com/agentharness/harness/provider/catalog"
	"github.com/agentharness/harness/proxy"
	"github.com/agentharness/harness/store"
)

const savingsSummary = `Print what the proxy saved: the tokens its cuts removed from the requests
your agents sent, and what they would have cost at each model's list price,
by day, client (the agent) and project (the agent's working directory).
The proxy keeps one line per model call in the transcript store; the same
figures are on the proxy's own page (http://127.0.0.1:8787/ by default) and
in its GET /stats.`

// cmdSavings runs "harness savings".
func cmdSavings(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "savings", "", savingsSummary)
	var sf storeFlags
	sf.register(fs)
	since := fs.String("since", "", "only calls since then: a date (2026-12-01), or a time ago such as 7d or 12h")
	pricesFile := fs.String("prices", "", "price table (JSON, or TOML for a .toml file) adding to or replacing the built-in list prices;\n"+
		`each model: {"input": …, "cached_input": …, "output": …} in dollars per million tokens`)
	jsonOut := fs.Bool("json", false, "print the figures as JSON")
	tenant := tenantFlag(fs, "only the calls of this proxy tenant's conversations")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, pos[0])
	}
	from, err := parseSince(*since, time.Now())
	if err != nil {
		return fmt.Errorf("%w: --since: %v", errUsage, err)
	}
	prices, err := loadPrices(*pricesFile)
	if err != nil {
		return err
	}
	s, err := openStore(ctx, &sf, true)
	if err != nil {
		return err
	}
	defer s.Close()
	rows, err := s.Savings(ctx, from)
	if err != nil {
		return err
	}
	if *tenant != "" {
		rows = slices.DeleteFunc(rows, func(v store.Saving) bool { return !ofTenant(v.Conversation, *tenant) })
	}
	rep := proxy.SummarizeSavings(rows, prices, time.Local)
	if *jsonOut {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printSavings(e.stdout, rep, s.Path(), from)
	return nil
}

// loadPrices returns the built-in list prices, with the file's entries
// when path is set.
func loadPrices(path string) (*catalog.Prices, error) {
	if path == "" {
		return catalog.ListPrices(), nil
	}
	return catalog.LoadPrices(path)
}

// parseSince reads --since: "" (everything), a date, or a time ago
// (Go durations, and days as 7d).
func parseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, time.Local); err == nil {
		return t, nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return time.Time{}, fmt.Errorf("%q: want a number of days such as 7d", s)
		}
		return now.AddDate(0, 0, -n), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("%q: want a date (2026-12-01) or a time ago (7d, 12h)", s)
	}
	return now.Add(-d), nil
}

// printSavings writes the report: a sentence, then a table per grouping.
func printSavings(w io.Writer, r proxy.SavingsReport, where string, from time.Time) {
	span := ""
	if !from.IsZero() {
		span = " since " + from.Format("2006-01-02 15:04")
	}
	if r.Calls == 0 {
		fmt.Fprintf(w, "No savings recorded in %s%s: run your agent through harness (harness proxy, or harness claude, codex, gemini, opencode).\n", where, span)
		return
	}
	share := ""
	if r.TokensSent > 0 {
		share = " (" + percent(r.SavedShare) + " of what your agents would have sent)"
	}
	worth := ", about " + dollars(r.DollarsSaved) + " at list prices"
	if r.UnpricedCalls == r.Calls {
		worth = " on models the price table does not know (--prices FILE adds them)"
	}
	fmt.Fprintf(w, "harness removed %s tokens%s%s, over %s model calls%s.\n",
		numfmt.Thousands(r.TokensSaved), share, worth, numfmt.Thousands(r.Calls), span)
	if r.UnpricedTokens > 0 && r.UnpricedCalls < r.Calls {
		fmt.Fprintf(w, "%s of those tokens were saved on models the price table does not know (--prices FILE adds them): their dollars show as –.\n", numfmt.Thousands(r.UnpricedTokens))
	}
	for _, g := range []struct {
		name, empty string
		rows        []proxy.SavingsRow
	}{
		{"day", "", r.ByDay},
		{"client", "(unknown)", r.ByClient},
		{"project", "(not stated)", r.ByProject},
		{"model", "(unknown)", r.ByModel},
	} {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "%s\tcalls\ttokens saved\tsaved\tdollars saved\tdollars spent\t\n", g.name)
		for _, row := range g.rows {
			name := row.Name
			if name == "" {
				name = g.empty
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", name, numfmt.Thousands(row.Calls), numfmt.Thousands(row.TokensSaved),
				shareText(row), rowDollars(row, row.DollarsSaved), rowDollars(row, row.DollarsSpent))
		}
		_ = tw.Flush()
	}
}

// shareText is the row's saved share, or – when its upstream reported no
// input tokens.
func shareText(r proxy.SavingsRow) string {
	if r.TokensSent <= 0 {
		return "–"
	}
	return percent(r.SavedShare)
}

// rowDollars is an amount of the row, or – when every call of the row
// was on a model the price table does not know (its dollars are unknown,
// not zero).
func rowDollars(r proxy.SavingsRow, d float64) string {
	if r.Calls > 0 && r.UnpricedCalls == r.Calls {
		return "–"
	}
	return dollars(d)
}

// percent formats a share as 12.3%.
func percent(share float64) string { return strconv.FormatFloat(share*100, 'f', 1, 64) + "%" }

// dollars formats an amount as $1,234.56.
func dollars(d float64) string {
	cents := int64(d*100 + 0.5)
	return "$" + numfmt.Thousands(cents/100) + fmt.Sprintf(".%02d", cents%100)
}
