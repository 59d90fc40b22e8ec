package proxy

import (
	"cmp"
	"slices"
	"time"

	"github.com/agentharness/harness/provider/catalog"
	"github.com/agentharness/harness/store"
)

// SavingsReport is what a proxy saved, in tokens and dollars, in total
// and by day, client, project and model: Stats.Savings, the proxy's page
// and harness savings show it.
//
// Tokens saved are those the proxy's cuts removed from requests (BPE
// o200k counts of what each cut replaced minus what it put in place).
// They are priced at the request's model's list price for input, split
// between cached and uncached input in the proportion the upstream
// reported for those requests (a removed token would have been read from
// the prompt cache as often as the rest of the request was); a model the
// price table does not know is counted in UnpricedTokens and
// UnpricedCalls and priced at 0.
type SavingsReport struct {
	Calls int64 `json:"calls"`
	// TokensSaved were removed; TokensSent are the input tokens the
	// upstream reported for the same calls; SavedShare is TokensSaved /
	// (TokensSaved + TokensSent), what the client would have sent that
	// the proxy removed (0 when the upstream reported no input tokens).
	TokensSaved int64   `json:"tokens_saved"`
	TokensSent  int64   `json:"tokens_sent"`
	SavedShare  float64 `json:"saved_share"`
	// DollarsSaved prices TokensSaved; DollarsSpent prices what the
	// upstream reported (input, cached and output) at list prices.
	DollarsSaved   float64 `json:"dollars_saved"`
	DollarsSpent   float64 `json:"dollars_spent"`
	UnpricedTokens int64   `json:"unpriced_tokens,omitempty"`
	UnpricedCalls  int64   `json:"unpriced_calls,omitempty"`
	// ByDay is in date order (days in the reader's time zone); the other
	// groups most tokens saved first. A project is the client's working
	// directory ("" when its requests do not state one).
	ByDay     []SavingsRow `json:"by_day"`
	ByClient  []SavingsRow `json:"by_client"`
	ByProject []SavingsRow `json:"by_project"`
	ByModel   []SavingsRow `json:"by_model"`
}

// SavingsRow is one group's figures in a [SavingsReport].
type SavingsRow struct {
	Name         string  `json:"name"`
	Calls        int64   `json:"calls"`
	TokensSaved  int64   `json:"tokens_saved"`
	TokensSent   int64   `json:"tokens_sent"`
	SavedShare   float64 `json:"saved_share"`
	DollarsSaved float64 `json:"dollars_saved"`
	DollarsSpent float64 `json:"dollars_spent"`
	// UnpricedCalls are the row's calls on models the price table does
	// not know: when they are all its calls, its dollars are unknown, not
	// zero.
	UnpricedCalls int64 `json:"unpriced_calls,omitempty"`
}

// SummarizeSavings sums savings (each one call, as a store keeps them)
// into a report, pricing them by prices (nil: catalog.ListPrices) and
// dating them in loc (nil: UTC).
func SummarizeSavings(savings []store.Saving, prices *catalog.Prices, loc *time.Location) SavingsReport {
	rows := make([]countedSaving, len(savings))
	for i, v := range savings {
		rows[i] = countedSaving{v, 1}
	}
	return summarizeCounted(rows, prices, loc)
}

// countedSaving is a saving standing for calls calls (the in-memory sums
// stand for many).
type countedSaving struct {
	store.Saving
	calls int64
}

// summarizeCounted groups rows by day, client, project and model, prices each
// group, and sums the groups into the report's totals and rows.
func summarizeCounted(rows []countedSaving, prices *catalog.Prices, loc *time.Location) SavingsReport {
	if prices == nil {
		prices = catalog.ListPrices()
	}
	if loc == nil {
		loc = time.UTC
	}
	groups := map[savingKey]*countedSaving{}
	for _, v := range rows {
		k := savingKey{v.At.In(loc).Format(time.DateOnly), v.Client, v.Project, v.Model}
		g := groups[k]
		if g == nil {
			g = &countedSaving{}
			groups[k] = g
		}
		g.calls += v.calls
		g.TokensSaved += v.TokensSaved
		g.Input += v.Input
		g.Cached += v.Cached
		g.Output += v.Output
	}
	var r SavingsReport
	keys := make([]savingKey, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	// In a fixed order, so the sums of dollars come out the same each time.
	slices.SortFunc(keys, func(a, b savingKey) int {
		return cmp.Or(cmp.Compare(a.day, b.day), cmp.Compare(a.client, b.client), cmp.Compare(a.project, b.project), cmp.Compare(a.model, b.model))
	})
	by := [4]map[string]*SavingsRow{{}, {}, {}, {}}
	for _, k := range keys {
		g := groups[k]
		row := SavingsRow{Calls: g.calls, TokensSaved: g.TokensSaved, TokensSent: g.Input}
		if price, _, ok := prices.Lookup(k.model); ok {
			row.DollarsSaved = savedDollars(price, g.Saving)
			row.DollarsSpent = price.Cost(g.Input, g.Cached, g.Output)
		} else {
			r.UnpricedTokens += g.TokensSaved
			row.UnpricedCalls = g.calls
		}
		r.Calls += row.Calls
		r.TokensSaved += row.TokensSaved
		r.TokensSent += row.TokensSent
		r.DollarsSaved += row.DollarsSaved
		r.DollarsSpent += row.DollarsSpent
		r.UnpricedCalls += row.UnpricedCalls
		for i, name := range []string{k.day, k.client, k.project, k.model} {
			addRow(by[i], name, row)
		}
	}
	r.SavedShare = share(r.TokensSaved, r.TokensSent)
	r.ByDay = rowsOf(by[0], func(a, b SavingsRow) int { return cmp.Compare(a.Name, b.Name) })
	most := func(a, b SavingsRow) int {
		return cmp.Or(cmp.Compare(b.TokensSaved, a.TokensSaved), cmp.Compare(a.Name, b.Name))
	}
	r.ByClient, r.ByProject, r.ByModel = rowsOf(by[1], most), rowsOf(by[2], most), rowsOf(by[3], most)
	return r
}

// savedDollars prices the tokens g saved at price's input rates, cached
// in the share of g's input the upstream read from its cache.
func savedDollars(price catalog.Price, g store.Saving) float64 {
	rate := price.Input
	if g.Input > 0 {
		cached := float64(min(g.Cached, g.Input)) / float64(g.Input)
		rate = (1-cached)*price.Input + cached*price.CachedInput
	}
	return float64(g.TokensSaved) * rate / 1e6
}

// addRow sums row into m[name].
func addRow(m map[string]*SavingsRow, name string, row SavingsRow) {
	s := m[name]
	if s == nil {
		s = &SavingsRow{Name: name}
		m[name] = s
	}
	s.Calls += row.Calls
	s.TokensSaved += row.TokensSaved
	s.TokensSent += row.TokensSent
	s.DollarsSaved += row.DollarsSaved
	s.DollarsSpent += row.DollarsSpent
	s.UnpricedCalls += row.UnpricedCalls
}

// rowsOf returns m's rows with their shares, sorted by order.
func rowsOf(m map[string]*SavingsRow, order func(a, b SavingsRow) int) []SavingsRow {
	out := make([]SavingsRow, 0, len(m))
	for _, s := range m {
		s.SavedShare = share(s.TokensSaved, s.TokensSent)
		out = append(out, *s)
	}
	slices.SortFunc(out, order)
	return out
}

// share is saved / (saved + sent), 0 when the upstream reported no input
// tokens (the share is then unknown).
func share(saved, sent int64) float64 {
	if sent <= 0 || saved < 0 {
		return 0
	}
	return float64(saved) / float64(saved+sent)
}
