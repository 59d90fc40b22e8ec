package bench

import "strings"

// Kinds of preset, as the tables label their rows.
const (
	KindBaseline = "baseline"     // none: keep everything, the ratio's denominator
	KindOurs     = "ours"         // harness's defaults, in process or as harness proxy applies them
	KindOther    = "other system" // another system's documented rules
	KindAblation = "ablation"     // harness with one default turned off or replaced
	KindIdea     = "idea"         // harness with something added or retuned: measured, not the default
	KindBound    = "bound"        // not a policy: a limit no policy can pass
)

// Kind says what a preset is: harness's defaults (or harness proxy's
// rule), another system, an
// ablation (a harness-no-… name: one default off), an idea (harness+… or
// harness@…: something added), the baseline or a bound (floor, oracle). A name no preset
// has is reported as another system's.
func Kind(name string) string {
	switch {
	case name == "none":
		return KindBaseline
	case name == "harness", name == proxyPresetName:
		return KindOurs
	case name == "floor", name == "oracle":
		return KindBound
	case strings.HasPrefix(name, "harness+"), strings.HasPrefix(name, "harness@"):
		return KindIdea
	case strings.HasPrefix(name, "harness-no-"):
		return KindAblation
	}
	if p, err := Lookup(name); err == nil && p.Ablation {
		return KindAblation
	}
	return KindOther
}

// candidate reports whether a preset may be shown as the one to pick:
// harness's defaults or another system's, never an ablation or an idea.
func candidate(name string) bool {
	k := Kind(name)
	return k == KindOurs || k == KindOther
}
