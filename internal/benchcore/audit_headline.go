package benchcore

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/agentharness/harness/provider/catalog"
)

// Headline is what an audit opens with, in plain words: what harness
// proxy (the harness-proxy preset) would have saved on the audited
// history, in input tokens and in dollars at the list prices of the
// models the recordings name, and the command that puts it in front of
// the agent that made them.
type Headline struct {
	Recordings int `json:"recordings"`
	Calls      int `json:"calls"`
	// InputNone and InputProxy are the input tokens the requests carried
	// as recorded (preset none) and as the proxy would have sent them.
	InputNone  int `json:"input_tokens_none"`
	InputProxy int `json:"input_tokens_proxy"`
	// DollarsNone and DollarsProxy price both at the list prices of each
	// recording's model (input, cached input, output); Priced counts the
	// recordings whose model has a list price (the others are left out
	// of both). SavedShare is 1 − DollarsProxy ÷ DollarsNone, or, when no
	// recording is priced, 1 − the preset's ratio to none under the
	// default price model.
	DollarsNone  float64 `json:"dollars_none"`
	DollarsProxy float64 `json:"dollars_proxy"`
	Priced       int     `json:"priced_recordings"`
	SavedShare   float64 `json:"saved_share"`
	// Models names the models priced, with the family each was priced
	// as when the table has no entry of its own for it.
	Models []string `json:"models,omitempty"`
	// Command runs the agent of most of the calls through harness.
	Command string `json:"command"`
}

// launchers are the commands that run each client through harness.
var launchers = map[string]string{
	"claude-code": "harness claude",
	"codex":       "harness codex",
	"gemini-cli":  "harness gemini",
	"opencode":    "harness opencode",
}

// Headline returns the audit's headline, priced by prices (nil:
// catalog.ListPrices); ok is false when the harness-proxy preset was not
// run.
func (r *AuditReport) Headline(prices *catalog.Prices) (h Headline, ok bool) {
	if prices == nil {
		prices = catalog.ListPrices()
	}
	byFormat := map[string]int{}
	models := map[string]bool{}
	for _, a := range r.Audits {
		none, proxy := presetIndex(a.Presets, "none"), presetIndex(a.Presets, proxyPresetName)
		if none < 0 || proxy < 0 {
			return Headline{}, false
		}
		n, p := a.Costs[none], a.Costs[proxy]
		h.Recordings++
		h.Calls += a.Calls
		h.InputNone += n.Input
		h.InputProxy += p.Input
		byFormat[a.Format] += a.Calls
		if price, entry, found := prices.Lookup(a.Model); found {
			h.Priced++
			h.DollarsNone += price.Cost(int64(n.Input), int64(n.Cached), int64(n.Output))
			h.DollarsProxy += price.Cost(int64(p.Input), int64(p.Cached), int64(p.Output))
			name := a.Model
			if strings.HasSuffix(entry, "-") || strings.HasSuffix(entry, ".") {
				name += " (priced as " + entry + "*)"
			}
			models[name] = true
		}
	}
	if h.Recordings == 0 {
		return Headline{}, false
	}
	switch {
	case h.DollarsNone > 0:
		h.SavedShare = 1 - h.DollarsProxy/h.DollarsNone
	case r.Total != nil:
		if i := rowIndex(r.Total.Rows, proxyPresetName); i >= 0 {
			h.SavedShare = 1 - r.Total.Rows[i].Ratios[defaultPricings[0]]
		}
	}
	for m := range models {
		h.Models = append(h.Models, m)
	}
	sort.Strings(h.Models)
	h.Command = "harness proxy --upstream URL (and point the agent at it)"
	best := 0
	for f, calls := range byFormat {
		if cmd, known := launchers[f]; known && (calls > best || (calls == best && cmd < h.Command)) {
			h.Command, best = cmd, calls
		}
	}
	return h, true
}

// presetIndex is the index of name in presets, or -1.
func presetIndex(presets []string, name string) int {
	for i, p := range presets {
		if p == name {
			return i
		}
	}
	return -1
}

// rowIndex is the index of preset name's row, or -1.
func rowIndex(rows []Row, name string) int {
	for i, r := range rows {
		if r.Preset == name {
			return i
		}
	}
	return -1
}

// WriteText prints the headline in plain words: what was saved, in
// percent and dollars, and the command to run.
func (h Headline) WriteText(w io.Writer) error {
	saved := h.InputNone - h.InputProxy
	var b strings.Builder
	fmt.Fprintf(&b, "harness proxy would have cut what this history cost by %.1f%%", 100*h.SavedShare)
	if h.Priced > 0 {
		models := strings.Join(h.Models, ", ")
		if len(h.Models) > 3 {
			models = fmt.Sprintf("%d models (--json lists them)", len(h.Models))
		}
		fmt.Fprintf(&b, ": %s of %s at the list prices of %s", usd(h.DollarsNone-h.DollarsProxy), usd(h.DollarsNone), models)
		if h.Priced < h.Recordings {
			fmt.Fprintf(&b, " (%d of %d recordings name a model with a list price; the others are not in the dollars)", h.Priced, h.Recordings)
		}
	} else {
		b.WriteString(" (no recording names a model with a list price: the share is under the " + defaultPricings[0] + " price model)")
	}
	fmt.Fprintf(&b, ".\nIt would have sent %s fewer input tokens (%s instead of %s) over %s in %s.\n",
		num(saved), num(h.InputProxy), num(h.InputNone), counted(h.Calls, "model call"), counted(h.Recordings, "recording"))
	fmt.Fprintf(&b, "To save it on your next sessions, run your agent through harness: %s\n\n", h.Command)
	_, err := io.WriteString(w, b.String())
	return err
}

// usd formats dollars as $1,234.56 (cents rounded).
func usd(d float64) string {
	cents := int64(math.Round(d * 100))
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s$%s.%02d", sign, num(int(cents/100)), cents%100)
}

// counted is n and noun, plural unless n is 1 ("1 recording", "2 model
// calls").
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return num(n) + " " + noun + "s"
}
