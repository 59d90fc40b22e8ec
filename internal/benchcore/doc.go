// Package benchcore compares context policies side by side on recorded agent
// runs: it names policy presets — harness's defaults and the documented
// rules of other systems (each preset's Doc names the rule), implemented here
// as guards and view policies — replays every recording under every preset
// with package replay, and reports effective tokens, their ratio to
// keeping everything, the cached share and evidence retention. With no
// recordings it generates a built-in scenario suite from the stories of
// the seeds (see [Suite]).
//
// It is the core behind package bench, which exposes to users what runs
// and reads a bench, and behind the lab's bench (lab/bench), whose
// ablations, ideas and research tests build presets from [HarnessConfig]
// and fold replays with [ReplayAll] and [Summary].
package benchcore
