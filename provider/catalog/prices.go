package catalog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Price is one model's list price in US dollars per million tokens: an
// uncached input token, an input token read from the prompt cache, and an
// output token.
type Price struct {
	Input       float64 `json:"input"`
	CachedInput float64 `json:"cached_input"`
	Output      float64 `json:"output"`
}

// Prices is a price table: exact model names and model families (a
// prefix ending in "-" or ".", such as "claude-sonnet-" or "gpt-5."). A
// nil *Prices has no entries.
type Prices struct {
	models map[string]Price
}

// listPrices are the providers' published list prices (standard tier,
// prompts under 200k tokens) for the models the four proxied clients
// default to and their families. Entries ending in "-" or "." are
// families: a model no exact entry names is priced as the longest family
// its name starts with.
var listPrices = map[string]Price{
	// Anthropic (cache reads at 0.1 × input).
	"claude-opus-4":     {15, 1.5, 75},
	"claude-opus-4-0":   {15, 1.5, 75},
	"claude-opus-4-1":   {15, 1.5, 75},
	"claude-opus-4-5":   {5, 0.5, 25},
	"claude-opus-":      {5, 0.5, 25},
	"claude-sonnet-4":   {3, 0.3, 15},
	"claude-sonnet-4-5": {3, 0.3, 15},
	"claude-sonnet-":    {3, 0.3, 15},
	"claude-haiku-4-5":  {1, 0.1, 5},
	"claude-haiku-":     {1, 0.1, 5},
	"claude-3-5-haiku":  {0.8, 0.08, 4},
	// OpenAI (cached input at 0.1 × input for gpt-5-class models).
	"gpt-5":         {1.25, 0.125, 10},
	"gpt-5-codex":   {1.25, 0.125, 10},
	"gpt-5.":        {1.25, 0.125, 10},
	"gpt-5-mini":    {0.25, 0.025, 2},
	"gpt-5-nano":    {0.05, 0.005, 0.4},
	"gpt-4.1":       {2, 0.5, 8},
	"gpt-4.1-mini":  {0.4, 0.1, 1.6},
	"gpt-4.1-nano":  {0.1, 0.025, 0.4},
	"gpt-4o":        {2.5, 1.25, 10},
	"gpt-4o-mini":   {0.15, 0.075, 0.6},
	"o3":            {2, 0.5, 8},
	"o4-mini":       {1.1, 0.275, 4.4},
	"codex-mini-":   {1.5, 0.375, 6},
	"deepseek-chat": {0.28, 0.028, 0.42},
	// deepseek-reasoner is billed as deepseek-chat since V3.2.
	"deepseek-reasoner": {0.28, 0.028, 0.42},
	// Google (context cache reads at 0.1 × input for 2.5 and later).
	"gemini-2.5-pro":        {1.25, 0.125, 10},
	"gemini-2.5-flash":      {0.3, 0.03, 2.5},
	"gemini-2.5-flash-lite": {0.1, 0.01, 0.4},
	"gemini-3-pro-preview":  {2, 0.2, 12},
	"gemini-3-pro-":         {2, 0.2, 12},
}

// ListPrices returns the built-in table of list prices.
func ListPrices() *Prices {
	m := make(map[string]Price, len(listPrices))
	for k, v := range listPrices {
		m[k] = v
	}
	return &Prices{models: m}
}

// Lookup returns the price of model and the table entry it was priced by:
// the model itself, or the family its name starts with (the longest such).
// A provider prefix ("anthropic/", "models/") and a date suffix
// ("-20250929", "-2025-08-07") are ignored. ok is false when no entry
// applies.
func (p *Prices) Lookup(model string) (price Price, entry string, ok bool) {
	if p == nil {
		return Price{}, "", false
	}
	name := normalModel(model)
	if pr, ok := p.models[name]; ok {
		return pr, name, true
	}
	best := ""
	for k := range p.models {
		if isFamily(k) && strings.HasPrefix(name, k) && len(k) > len(best) {
			best = k
		}
	}
	if best == "" {
		return Price{}, "", false
	}
	return p.models[best], best, true
}

// isFamily reports whether entry k names a family rather than a model.
func isFamily(k string) bool {
	return strings.HasSuffix(k, "-") || strings.HasSuffix(k, ".")
}

// normalModel lowercases model and drops a provider prefix and a date
// suffix.
func normalModel(model string) string {
	name := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	parts := strings.Split(name, "-")
	// -20250929 or -2025-08-07.
	switch n := len(parts); {
	case n > 1 && len(parts[n-1]) == 8 && allDigits(parts[n-1]):
		name = strings.Join(parts[:n-1], "-")
	case n > 3 && len(parts[n-3]) == 4 && len(parts[n-2]) == 2 && len(parts[n-1]) == 2 &&
		allDigits(parts[n-3]+parts[n-2]+parts[n-1]):
		name = strings.Join(parts[:n-3], "-")
	}
	return name
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// LoadPrices reads a price file and returns the built-in table with the
// file's entries added or replacing those of the same name. A file
// ending in .toml is TOML, anything else JSON; both map a model (or a
// family, ending in "-" or ".") to its input, cached_input and output
// price in dollars per million tokens:
//
//	{"my-model": {"input": 1, "cached_input": 0.1, "output": 4}}
//
//	["my-model"]
//	input = 1
//	cached_input = 0.1
//	output = 4
func LoadPrices(path string) (*Prices, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("catalog: prices: %w", err)
	}
	var over map[string]Price
	if strings.EqualFold(filepath.Ext(path), ".toml") {
		over, err = parsePricesTOML(data)
	} else {
		over, err = parsePricesJSON(data)
	}
	if err != nil {
		return nil, fmt.Errorf("catalog: prices %s: %w", path, err)
	}
	p := ListPrices()
	for k, v := range over {
		p.models[normalEntry(k)] = v
	}
	return p, nil
}

// normalEntry normalizes a file's entry name: a family keeps its trailing
// separator.
func normalEntry(k string) string {
	if isFamily(k) {
		return strings.ToLower(strings.TrimSpace(k))
	}
	return normalModel(k)
}

// parsePricesJSON reads {"model": {"input": …, "cached_input": …,
// "output": …}}, rejecting unknown fields and negative prices.
func parsePricesJSON(data []byte) (map[string]Price, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	out := make(map[string]Price, len(raw))
	for k, v := range raw {
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.DisallowUnknownFields()
		var pr Price
		if err := dec.Decode(&pr); err != nil {
			return nil, fmt.Errorf("%q: %w", k, err)
		}
		if err := checkPrice(k, pr); err != nil {
			return nil, err
		}
		out[k] = pr
	}
	return out, nil
}

// parsePricesTOML reads the subset of TOML a price file needs: tables
// named by a model (bare or quoted), each with input, cached_input and
// output as numbers; # comments and blank lines.
func parsePricesTOML(data []byte) (map[string]Price, error) {
	out := map[string]Price{}
	table := ""
	var cur Price
	flush := func() error {
		if table == "" {
			return nil
		}
		if err := checkPrice(table, cur); err != nil {
			return err
		}
		out[table] = cur
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(stripComment(sc.Text()))
		switch {
		case s == "":
			continue
		case strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]"):
			if err := flush(); err != nil {
				return nil, err
			}
			name := strings.TrimSpace(s[1 : len(s)-1])
			if uq, err := strconv.Unquote(name); err == nil {
				name = uq
			}
			if name == "" {
				return nil, fmt.Errorf("line %d: empty table name", line)
			}
			if _, dup := out[name]; dup {
				return nil, fmt.Errorf("line %d: model %q given twice", line, name)
			}
			table, cur = name, Price{}
		default:
			if err := setTOMLKey(&cur, table, s, line); err != nil {
				return nil, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

// setTOMLKey applies one "key = number" line of table to pr.
func setTOMLKey(pr *Price, table, s string, line int) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("line %d: want key = number or [model], got %q", line, s)
	}
	if table == "" {
		return fmt.Errorf("line %d: %q before any [model] table", line, strings.TrimSpace(k))
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(v), "_", ""), 64)
	if err != nil {
		return fmt.Errorf("line %d: %s: want a number: %w", line, strings.TrimSpace(k), err)
	}
	switch strings.TrimSpace(k) {
	case "input":
		pr.Input = f
	case "cached_input":
		pr.CachedInput = f
	case "output":
		pr.Output = f
	default:
		return fmt.Errorf("line %d: unknown key %q (want input, cached_input, output)", line, strings.TrimSpace(k))
	}
	return nil
}

// stripComment drops a # comment that is not inside a quoted table name.
func stripComment(s string) string {
	in := false
	for i, r := range s {
		switch {
		case r == '"':
			in = !in
		case r == '#' && !in:
			return s[:i]
		}
	}
	return s
}

// checkPrice refuses a negative or non-finite price.
func checkPrice(model string, p Price) error {
	for _, f := range []float64{p.Input, p.CachedInput, p.Output} {
		if f < 0 || f != f || f > 1e9 {
			return fmt.Errorf("%q: price %v out of range", model, f)
		}
	}
	if model == "" {
		return errors.New("empty model name")
	}
	return nil
}

// Cost is what tokens cost at p in dollars: input tokens (cached
// included), the cached part of them, and output tokens.
func (p Price) Cost(input, cached, output int64) float64 {
	if cached > input {
		cached = input
	}
	return (float64(input-cached)*p.Input + float64(cached)*p.CachedInput + float64(output)*p.Output) / 1e6
}
