// Package benchcore compares context policies side by side on recorded agent
// runs: it names policy presets — harness's defaults, ablations of them,
// and the documented rules of other systems (each preset's Doc names the rule), implemented here
// as guards and view policies — replays every recording under every preset
// with package replay, and reports effective tokens, their ratio to
// keeping everything, the cached share and evidence retention. With no
// recordings it generates a built-in scenario suite from the stories of
// the seeds (see [Suite]).
package benchcore
