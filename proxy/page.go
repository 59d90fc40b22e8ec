package proxy

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"strings"
)

// pageHTML is the savings page: one self-contained file (its CSS and
// script inline, nothing loaded from elsewhere) that renders the
// /stats figures it carries and then refreshes them from /stats.
//
//go:embed page.html
var pageHTML string

// servePage writes the savings page with the current figures in it, so
// it shows them before its first refresh.
func (p *Proxy) servePage(w http.ResponseWriter, r *http.Request) {
	keep, tenant := p.statsFilter(r)
	s := p.statsFor(keep, tenant)
	if rep, err := p.savings.report(r.Context(), p.opts.Prices, keep); err == nil {
		s.Savings = &rep
	}
	// json.Marshal escapes <, > and &: the data cannot close the script.
	data, _ := json.Marshal(s)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'")
	_, _ = w.Write([]byte(strings.Replace(pageHTML, "{{DATA}}", string(data), 1)))
}
