package bench

import (
	"context"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/replay"
)

// Research returns the presets of the cost research (issue 9): harness's
// defaults plus one opt-in policy each, run only when named (harness
// bench --presets …), so the default table stays the anchors and the
// ablations.
func Research() []Preset {
	r := func(name, doc string, change func(env replay.Env, cfg *replay.Config)) Preset {
		return Preset{Name: name, Doc: doc, Ablation: true, build: func(env replay.Env) (*replay.Config, error) {
			cfg, err := defaultHarness().build(env)
			if err != nil {
				return nil, err
			}
			if change != nil {
				change(env, cfg)
			}
			return cfg, nil
		}}
	}
	econ := func(e *guard.EconClear) func(replay.Env, *replay.Config) {
		return func(_ replay.Env, cfg *replay.Config) {
			e.Clear = chainCompact(cfg)
			cfg.Policies = append(cfg.Policies, e)
		}
	}
	settle := func(s *guard.Settle) func(replay.Env, *replay.Config) {
		return func(env replay.Env, cfg *replay.Config) {
			s.Counter = env.Counter
			// Before TurnBudget and CompactPolicy: they then see the
			// settled copies.
			cfg.Policies = append([]harness.ViewPolicy{s}, cfg.Policies...)
		}
	}
	return []Preset{
		r("harness+econ", "harness + guard.EconClear: clear results older than the newest 3 rounds when 0.1 × tokens saved × requests so far ≥ the cache miss", econ(&guard.EconClear{})),
		r("harness+econ2", "harness + guard.EconClear with margin 2 (the saving must be twice the miss)", econ(&guard.EconClear{Margin: 2})),
		r("harness+econ/k8", "harness + guard.EconClear keeping the newest 8 rounds", econ(&guard.EconClear{KeepRounds: 8})),
		r("harness+econ/k16", "harness + guard.EconClear keeping the newest 16 rounds", econ(&guard.EconClear{KeepRounds: 16})),
		r("harness+settle", "harness + guard.Settle: results over 2 KiB become a 512 + 768 byte digest from the request after the model first replied to them", settle(&guard.Settle{})),
		r("harness+settle/a2", "harness + guard.Settle, after 2 replies", settle(&guard.Settle{After: 2})),
		r("harness+settle/a3", "harness + guard.Settle, after 3 replies", settle(&guard.Settle{After: 3})),
		r("harness+settle/mid", "harness + guard.Settle with 512 bytes of the lines naming what the model wrote next", settle(&guard.Settle{Mid: 512})),
		r("harness+settle/runs", "harness + guard.Settle on every result but file reads (cat, head, tail, sed, nl, awk of a file; read tools)", settle(&guard.Settle{Skip: guard.SkipFileReads})),
		r("harness+settle/runs-a2", "harness + guard.Settle on every result but file reads, after 2 replies", settle(&guard.Settle{Skip: guard.SkipFileReads, After: 2})),
		r("harness+settle/runs-a2-mid", "harness + guard.Settle on every result but file reads, after 2 replies, with 1 KiB of the lines naming what the model wrote in them", settle(&guard.Settle{Skip: guard.SkipFileReads, After: 2, Mid: 1024})),
		r("harness+settle/runs-mid", "harness + guard.Settle on every result but file reads, with 512 bytes of the lines naming what the model wrote next", settle(&guard.Settle{Skip: guard.SkipFileReads, Mid: 512})),
		r("harness+settle/runs-small", "harness + guard.Settle on every result but file reads over 1 KiB, digest 256 + 512 bytes", settle(&guard.Settle{Skip: guard.SkipFileReads, Over: 1 << 10, Head: 256, Tail: 512})),
		r("harness+settle/runs-tiny", "harness + guard.Settle on every result but file reads over 768 bytes, digest 192 + 320 bytes", settle(&guard.Settle{Skip: guard.SkipFileReads, Over: 768, Head: 192, Tail: 320})),
		r("harness+settle/runs-small-mid", "harness + guard.Settle on every result but file reads over 1 KiB, digest 256 + 512 bytes + 512 bytes of the lines naming what the model wrote next", settle(&guard.Settle{Skip: guard.SkipFileReads, Over: 1 << 10, Head: 256, Tail: 512, Mid: 512})),
		r("harness+settle/runs+econ/k8", "harness + guard.Settle on every result but file reads + guard.EconClear keeping the newest 8 rounds", func(env replay.Env, cfg *replay.Config) {
			settle(&guard.Settle{Skip: guard.SkipFileReads})(env, cfg)
			econ(&guard.EconClear{KeepRounds: 8})(env, cfg)
		}),
		r("harness+settle/runs+lowwater", "harness + guard.Settle on every result but file reads + the harness+lowwater compaction (chunked clearing from 24,000 tokens down to 12,000)", func(env replay.Env, cfg *replay.Config) {
			h := defaultHarness()
			h.clearAt = 24_000
			low, _ := h.build(env)
			*cfg = *low
			settle(&guard.Settle{Skip: guard.SkipFileReads})(env, cfg)
		}),
		r("harness+settle/runs@8k", "harness + guard.Settle on every result but file reads, with an 8 KiB ceiling", func(env replay.Env, cfg *replay.Config) {
			cfg.Guards[0] = (&guard.ResultPolicy{MaxBytes: guard.Bytes(8 << 10)}).Guard()
			settle(&guard.Settle{Skip: guard.SkipFileReads})(env, cfg)
		}),
		r("harness+settle/runs+reads-a4", "harness + guard.Settle on every result but file reads (after 1 reply) + file reads settled after 4 replies, keeping 1 KiB of the lines the model named in them", twoTier(4, 1024)),
		r("harness+settle/runs+reads-a8", "harness + guard.Settle on every result but file reads (after 1 reply) + file reads settled after 8 replies, keeping 2 KiB of the lines the model named in them", twoTier(8, 2048)),
		r("harness+settle/runs+reads-a16", "harness + guard.Settle on every result but file reads (after 1 reply) + file reads settled after 16 replies, keeping 2 KiB of the lines the model named in them", twoTier(16, 2048)),
		r("harness+arrival/runs", "harness whose command outputs (not file reads) over 2 KiB are cut at arrival to a 512 + 768 byte preview with spill (the model never sees them whole): what guard.Settle's one whole showing is worth", func(env replay.Env, cfg *replay.Config) {
			small := (&guard.ResultPolicy{MaxBytes: guard.Bytes(2 << 10), Preview: guard.HeadTail{Head: 512, Tail: 768}}).Guard()
			def := cfg.Guards[0]
			cfg.Guards[0] = func(next harness.ToolFunc) harness.ToolFunc {
				s, d := small(next), def(next)
				return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
					if guard.ReadsFile(*call) {
						return d(ctx, call)
					}
					return s(ctx, call)
				}
			}
		}),
	}
}

// twoTier settles command outputs after one reply and file reads after
// `after` replies with mid bytes of the lines the model named.
func twoTier(after, mid int) func(replay.Env, *replay.Config) {
	return func(env replay.Env, cfg *replay.Config) {
		runs := &guard.Settle{Skip: guard.SkipFileReads, Counter: env.Counter}
		reads := &guard.Settle{Skip: func(c harness.ToolCall, _ *harness.ToolResult) bool { return !guard.ReadsFile(c) },
			After: after, Mid: mid, Counter: env.Counter}
		cfg.Policies = append([]harness.ViewPolicy{runs, reads}, cfg.Policies...)
	}
}

// chainCompact is the CompactPolicy of cfg's chain, or nil.
func chainCompact(cfg *replay.Config) *guard.CompactPolicy {
	for _, p := range cfg.Policies {
		if c, ok := p.(*guard.CompactPolicy); ok {
			return c
		}
	}
	return nil
}
