package benchcore

import "strings"

// Kinds of preset, as the tables label their rows.
const (
	kindBaseline = "baseline"     // none: keep everything, the ratio's denominator
	kindOurs     = "ours"         // harness's defaults, in process or as harness proxy applies them
	kindOther    = "other system" // another system's documented rules
	KindAblation = "ablation"     // harness with one default turned off or replaced
	KindIdea     = "idea"         // harness with something added or retuned: measured, not the default
	kindBound    = "bound"        // not a policy: a limit no policy can pass
)

// Kind says what a preset is: harness's defaults (or harness proxy's
// rule), another system, an
// ablation (a harness-no-… name: one default off), an idea (harness+… or
// harness@…: something added), the baseline or a bound (floor, oracle). A name no preset
// has is reported as another system's.
func Kind(name string) string {
	switch {
	case name == "none":
		return kindBaseline
	case name == "harness", name == proxyPresetName:
		return kindOurs
	case name == "floor", name == "oracle":
		return kindBound
	case strings.HasPrefix(name, "harness+"), strings.HasPrefix(name, "harness@"):
		return KindIdea
	case strings.HasPrefix(name, "harness-no-"):
		return KindAblation
	}
	if p, err := Lookup(name); err == nil && p.Ablation {
		return KindAblation
	}
	return kindOther
}

// candidate reports whether a preset may be shown as the one to pick:
// harness's defaults or another system's, never an ablation or an idea.
func candidate(name string) bool {
	k := Kind(name)
	return k == kindOurs || k == kindOther
}
