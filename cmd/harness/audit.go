package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/benchcore"
	"github.com/agentharness/harness/provider/catalog"
	"github.com/agentharness/harness/replay"
)

// cmdAudit reports where recorded transcripts spent their context.
func cmdAudit(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "audit", "FILE|DIR…", "Open with what harness proxy would have saved on this history, in percent and in dollars at the list\n"+
		"prices of the recorded models, and the command that runs your agent through it. Then report, per\n"+
		"conversation and turn, the evidence characters, the largest results, repeated reads\n"+
		"(exact and overlapping line ranges of one file), tool schemas serialized, and what each preset would\n"+
		"have cost. A transcript store (.harness/harness.db) is audited conversation by conversation. A folder\n"+
		"is read recursively (harness audit ~/.claude/projects/DIR, harness audit ~/.codex/sessions, harness audit\n"+
		"~/.gemini/tmp, harness audit ~/.local/share/opencode for opencode's database): every\n"+
		"recognised file is imported, each model context (a Claude Code subagent, a part after a compaction)\n"+
		"audited apart, and a summary per file and in total goes to standard error. The last table sums every\n"+
		"recording: what each preset would have cost the whole history.\n\n"+
		"Columns:\n"+benchcore.ColumnNotes)
	jsonOut := fs.Bool("json", false, `print the audit as JSON: {"recordings": [each recording's audit], "total": the presets over all of them, as bench --json}`)
	htmlOut := fs.String("html", "", "also write a self-contained HTML page with charts to this file")
	cuts := fs.Bool("cuts", false, "also list, per recording, each result harness's presets would cut: how, what hiding it saved and what\n"+
		"reading it back cost (in --json, each cell's cuts)")
	presets := fs.String("presets", "", "comma-separated presets to cost, or all (default harness, harness-proxy, the other systems and the bounds: all of them;\n"+
		"none is always included)")
	pricing := fs.String("pricing", "", "comma-separated price models the text shows (openai, openai-4.1, anthropic, nocache; default openai,anthropic)")
	db := fs.String("db", "", "also read every conversation of this transcript store (a file, or a postgres:// URL)")
	pricesFile := fs.String("prices", "", "price table for the headline's dollars (JSON, or TOML for a .toml file; see harness savings -h)")
	ttl := cacheTTLFlag(fs)
	sf := addSupplyFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 && *db == "" {
		return fmt.Errorf("%w: want the history to audit: a folder or file of sessions (~/.claude/projects/DIR, ~/.codex/sessions, "+
			"~/.gemini/tmp, ~/.local/share/opencode), or a transcript store (.harness/harness.db, or --db)", errUsage)
	}
	ps, err := pickPresets(*presets)
	if err != nil {
		return err
	}
	if *presets == "" {
		ps = auditPresets()
	}
	if *htmlOut != "" {
		// Before the audit, which may take minutes on a long history.
		if st, err := os.Stat(filepath.Dir(*htmlOut)); err != nil || !st.IsDir() {
			return fmt.Errorf("--html %s: no folder %s to write it in", *htmlOut, filepath.Dir(*htmlOut))
		}
	}
	listPrices, err := loadPrices(*pricesFile)
	if err != nil {
		return err
	}
	prices, err := pickPricings(*pricing)
	if err != nil {
		return err
	}
	opts, err := cacheOptions(&bench.Options{Presets: ps, Progress: progressBar(e.stderr), Cuts: *cuts}, *ttl)
	if err != nil {
		return err
	}
	recs, err := loadOrSuite(ctx, e, sf, pos, true, *db)
	if err != nil {
		return err
	}
	report, err := bench.AuditRecordings(ctx, recs, opts)
	if err != nil {
		return err
	}
	report.Prices = listPrices
	audits := report.Audits
	for i := range audits {
		audits[i].Pricings = prices
	}
	report.Total.Pricings = prices
	if *htmlOut != "" {
		if err := writeAuditHTML(*htmlOut, report); err != nil {
			return fmt.Errorf("--html: %w", err)
		}
	}
	if *jsonOut {
		return writeAuditJSON(e, report, recs, listPrices)
	}
	return report.WriteText(e.stdout)
}

// writeAuditHTML writes the audit's page to path.
func writeAuditHTML(path string, report *bench.AuditReport) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := report.WriteHTML(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeAuditJSON prints audit --json. Each audit carries its recording's
// warnings (printed on standard error too), so a JSON reader sees what
// the figures leave out.
func writeAuditJSON(e *env, report *bench.AuditReport, recs []*replay.Recording, listPrices *catalog.Prices) error {
	warns := map[string][]string{}
	for _, r := range recs {
		warns[r.Source] = r.Warnings
	}
	audits := report.Audits
	out := auditReportJSON{Recordings: make([]auditJSON, len(audits)), Total: report.Total}
	if h, ok := report.Headline(listPrices); ok {
		out.Headline = &h
	}
	for i := range audits {
		out.Recordings[i] = auditJSON{Audit: &audits[i], Warnings: warns[audits[i].Source]}
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// auditReportJSON is what audit --json prints: each recording's audit,
// and the presets' figures summed over all of them (the text's last
// table) in the form harness bench --json prints a table.
type auditReportJSON struct {
	Headline   *bench.Headline `json:"headline,omitempty"`
	Recordings []auditJSON     `json:"recordings"`
	Total      *bench.Table    `json:"total"`
}

// auditPresets are audit's default presets: bench's main ones and
// harness-proxy, the rule the user can run today (harness proxy and the
// launchers), which the headline reports.
func auditPresets() []bench.Preset {
	ps := mainPresets()
	for _, p := range ps {
		if p.Name == "harness-proxy" {
			return ps
		}
	}
	px, err := bench.Lookup("harness-proxy")
	if err != nil {
		return ps
	}
	return append(ps, px)
}

// auditJSON is one recording of audit --json: the audit's fields and the
// importer's warnings about its recording.
type auditJSON struct {
	*benchcore.Audit
	Warnings []string `json:"warnings,omitempty"`
}
