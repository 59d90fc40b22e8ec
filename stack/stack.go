// Package stack builds harness's default stack — the per-call guards and
// per-turn view policies every request goes through, in their order — from
// one Config whose zero value is the default. harness run, the bench's
// harness preset, the README and the examples all build it here, so what
// is measured is what runs.
//
// The order matters. Per call, outermost first: the result ceiling
// (guard.ResultPolicy: spill, preview, optional repeat suppression), the
// run ceiling (guard.RunCeiling: a program's output cut to 2 KiB), any
// Inner guards, then guard.Collapse innermost, so a re-read that collapses
// under the ceiling needs no spill. Per turn, in order: policy.StuckPolicy
// (a stop rebuilds the view as final before anything is trimmed),
// policy.TurnBudget, then policy.CompactPolicy, which sees the budgeted view.
//
// "Off" has one spelling, here and in the guards' and policies' option
// structs: a No… field. Every zero value (and a nil options pointer) means
// the part's own default.
package stack

import (
	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/tools/recall"
)

// Config changes the default stack; the zero value (or nil) is the
// default: the result ceiling by the call (24 KiB, less for searches,
// listings and a shell's prints after two spills) with spill and the
// relevant preview, a 2 KiB ceiling for the output of shell commands that
// run programs, Collapse, StuckPolicy, TurnBudget, CompactPolicy (clearing
// for cost and near the window) and the recall tool that compaction's
// placeholders point at.
type Config struct {
	// Ceiling configures the per-result ceiling; nil is
	// guard.ResultPolicy's defaults.
	Ceiling *guard.ResultPolicy
	// NoCeiling leaves guard.ResultPolicy out: no ceiling, no spill, no
	// repeat suppression (Ceiling is then ignored).
	NoCeiling bool
	// RunCeiling configures the ceiling of the output of shell commands
	// that run programs (tests, builds, scripts); nil is
	// guard.RunCeiling's defaults.
	RunCeiling *guard.RunCeiling
	// NoRunCeiling leaves guard.RunCeiling out: a program's output gets
	// the result ceiling like any other result.
	NoRunCeiling bool
	// Inner guards run inside the ceilings, before Collapse.
	Inner []harness.Guard
	// NoCollapse leaves guard.Collapse out: repeated blocks of lines are
	// shown in full.
	NoCollapse bool
	// Collapse configures guard.Collapse (nil: its defaults).
	Collapse *guard.Collapse
	// NoStuck leaves policy.StuckPolicy out: no nudge, no stop of a
	// stuck loop.
	NoStuck bool
	// TurnBudget configures the turn's evidence budget; nil is
	// policy.TurnBudget's defaults.
	TurnBudget *policy.TurnBudget
	// NoTurnBudget leaves policy.TurnBudget out: a turn's results are not
	// trimmed to a shared budget.
	NoTurnBudget bool
	// Compact is the compaction policy, used as given (it keeps its
	// calibration across requests, so give each stack its own): the model
	// name, window, counter, calibrator and summarizer of the run go here.
	// Nil is policy.CompactPolicy's defaults (the window, and the pause
	// after which the idle clear runs, from the model name: with none,
	// neither applies).
	Compact *policy.CompactPolicy
	// NoCompact leaves policy.CompactPolicy out: nothing is cleared or
	// summarized, however close the window.
	NoCompact bool
	// Recall configures the recall tool (a store's lookup for results the
	// in-memory transcript lacks).
	Recall *recall.Options
	// NoRecall leaves the recall tool out, and compaction's placeholders
	// then name only the call id and any spill file.
	NoRecall bool
}

// Stack is the default stack, built: what harness.Options needs.
type Stack struct {
	// Guards wrap every tool call, Guards[0] outermost.
	Guards []harness.Guard
	// Policies edit every request view, in order.
	Policies []harness.ViewPolicy
	// Tools are the tools the stack's markers point at (recall), to offer
	// beside the agent's own.
	Tools []harness.Tool
	// Recall reports whether the recall tool is offered: a result cut with
	// a "call:<id>" locator, or cleared by compaction, can be read back.
	Recall bool
}

// New builds the stack cfg describes (nil: the default). Each call builds
// fresh guards and policies (but for a given Compact, whose calibration is
// state): stacks share nothing.
func New(cfg *Config) *Stack {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	s := &Stack{Recall: !c.NoRecall}
	if !c.NoCeiling {
		s.Guards = append(s.Guards, c.Ceiling.Guard())
	}
	if !c.NoRunCeiling {
		s.Guards = append(s.Guards, c.RunCeiling.Guard())
	}
	s.Guards = append(s.Guards, c.Inner...)
	if !c.NoCollapse {
		s.Guards = append(s.Guards, c.Collapse.Guard())
	}
	if !c.NoStuck {
		s.Policies = append(s.Policies, &policy.StuckPolicy{})
	}
	if !c.NoTurnBudget {
		tb := &policy.TurnBudget{}
		if c.TurnBudget != nil {
			*tb = *c.TurnBudget
		}
		s.Policies = append(s.Policies, tb)
	}
	if !c.NoCompact {
		cp := c.Compact
		if cp == nil {
			cp = &policy.CompactPolicy{}
		}
		if c.NoRecall {
			cp.NoRecall = true
		}
		s.Policies = append(s.Policies, cp)
	}
	if s.Recall {
		s.Tools = append(s.Tools, recall.New(c.Recall))
	}
	return s
}

// Apply adds the stack to opts: its guards before opts.Guards (the
// ceiling stays outermost), its policies after opts.Policies, and its
// tools after opts.Tools.
func (s *Stack) Apply(opts *harness.Options) {
	opts.Guards = append(append([]harness.Guard(nil), s.Guards...), opts.Guards...)
	opts.Policies = append(opts.Policies, s.Policies...)
	opts.Tools = append(opts.Tools, s.Tools...)
}
