package benchcore

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/internal/locator"
	"github.com/agentharness/harness/internal/replayengine"
	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/provider/catalog"
	"github.com/agentharness/harness/spill"
	"github.com/agentharness/harness/stack"
)

// proxyPresetName names the preset that replays harness proxy's rule.
const proxyPresetName = "harness-proxy"

// proxyConfig is the rule harness proxy applies to the results it
// forwards, as a replay runs it.
type proxyConfig struct {
	// noClearIdle leaves out the idle clear, as harness proxy
	// --clear-when-idle off does (and as a bench run --through the proxy
	// sees it, since the bench sends its requests without pauses).
	noClearIdle bool
}

// proxyPreset is harness proxy's rule (proxy/decide.go's proxyStack,
// budget.go, idle.go) replayed in process. It is opt-in: the main job's
// tables compare harness's in-process defaults with the other systems.
func proxyPreset() Preset {
	return Preset{Name: proxyPresetName, Doc: "what harness proxy forwards, decided once as each result arrives: the per-call guards of the default stack (ResultPolicy's ceiling by the call with spill, RunCeiling, Collapse), then the turn budget on arrival (policy.TurnBudget.Arrive: the results new in a request share what is left of the turn's 24,000 chars over its first 8 rounds, the newest round included), and old results cleared only at a request after a pause longer than the cache lives (CompactPolicy ClearWhenIdle with NoClearOld, NoRecall, Unbounded, no window); no tool selection, no stuck verdict, no recall tool (so what Collapse and the turn budget take is named by a spill file). The lifetime is catalog.CacheLifetime of the recorded model (5 min for claude-*, 1 h for gpt-*/codex-*/o-series, no clear otherwise): the proxy reads it from the wire format (Anthropic's cache_control ttl, OpenAI's retention), which a recording does not keep, and the model names the provider whose default the client met; never shorter than the cache the bench prices lives (--cache-ttl), and no idle clear when it prices a cache that never expires",
		OptIn: true, Build: proxyConfig{}.Build}
}

// build returns the replay configuration of the proxy's rule for env.
func (pc proxyConfig) Build(env replayengine.Env) (*replayengine.Config, error) {
	// The stack as proxyStack configures it: the ceilings' spill store is
	// the replay's (the proxy's names an absolute path under its
	// workspace, a few bytes longer), the per-turn policies are off.
	// With no recall tool, what Collapse and the turn budget take is named
	// by a spill file, as the proxy's are (proxy/decide.go, budget.go).
	dir := &spill.Dir{Workspace: env.Workspace}
	st := stack.New(&stack.Config{NoStuck: true, NoCompact: true, NoRecall: true, NoTurnBudget: true, Collapse: &guard.Collapse{Spill: dir}})
	tb := &policy.TurnBudget{Spill: &spillOnce{store: dir, saved: map[spillKey]spill.Saved{}}}
	pols := []harness.ViewPolicy{arrivalRounds(tb)}
	// The proxy reads the lifetime from the wire; the replay waits no
	// less than the cache it is priced with lives (harnessConfig.idleAfter).
	if lifetime := pricedIdle(env, catalog.CacheLifetime(env.Model)); lifetime > 0 && !pc.noClearIdle {
		// proxy/idle.go's policy: the idle clear alone, never for size (no
		// window) nor for cost; the clear's choice reads no token count.
		pols = append(pols, spillCleared{&policy.CompactPolicy{ClearWhenIdle: lifetime, NoClearOld: true, NoRecall: true, Unbounded: true,
			Windows: catalog.Windows{}, Counter: env.Counter}, tb.Spill})
	}
	return &replayengine.Config{Guards: st.Guards, Policies: append(pols, st.Policies...), Recall: st.Recall}, nil
}

// spillCleared is the idle clear (its CompactPolicy) naming each result
// it clears by a spill file, as the proxy's placeholder does
// (proxy/idle.go), where a CompactPolicy without recall names the call id
// of a result no ceiling spilled.
type spillCleared struct {
	*policy.CompactPolicy
	spill spill.Store
}

// ApplyView clears as the CompactPolicy does, then spills each result it
// cleared and names the file in its placeholder.
func (sc spillCleared) ApplyView(ctx context.Context, v *harness.View) error {
	if err := sc.CompactPolicy.ApplyView(ctx, v); err != nil {
		return err
	}
	conv := ""
	if v.Conversation != nil {
		conv = v.Conversation.ID
	}
	for i := range v.Messages {
		o := &v.Origins[i]
		n := len(o.Cuts)
		if n == 0 || o.Result == nil || o.Cuts[n-1].Kind != harness.CutCleared || !locator.IsCall(o.Cuts[n-1].Locator) {
			continue
		}
		saved, err := sc.spill.Save(ctx, spill.Entry{Conversation: conv, CallID: o.Result.CallID, Tool: o.Result.Tool, Ext: "txt"}, strings.NewReader(o.Result.FullText()))
		if err != nil {
			return fmt.Errorf("bench: spilling a cleared result: %w", err)
		}
		o.Cuts[n-1].Locator = saved.Locator
		text := strings.Replace(v.Messages[i].Text(), "it is stored under call id "+o.Result.CallID, "read the file "+saved.Locator, 1)
		v.Messages[i].Parts = []harness.Part{harness.TextPart(text)}
	}
	return nil
}

// spillOnce saves each result once: a replay rebuilds the view, and
// re-applies the turn budget, at every request, where the proxy trims a
// result once when it arrives.
type spillOnce struct {
	store spill.Store
	mu    sync.Mutex
	saved map[spillKey]spill.Saved
}

type spillKey struct{ conv, call string }

func (s *spillOnce) Save(ctx context.Context, e spill.Entry, content io.Reader) (spill.Saved, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := spillKey{e.Conversation, e.CallID}
	if saved, ok := s.saved[k]; ok {
		return saved, nil
	}
	saved, err := s.store.Save(ctx, e, content)
	if err == nil {
		s.saved[k] = saved
	}
	return saved, err
}

// arrivalRounds applies tb on arrival as harness proxy does
// (proxy/budget.go): round by round, the results of each round of a turn
// share what the turn's earlier rounds left of the budget
// (TurnBudget.Arrive), the newest round included, and every turn of the
// view keeps its trims (the proxy forwards a result as decided, in every
// later turn too). A replay rebuilds the view at every request, and the
// rule depends only on the results, so every request shows a result as
// the proxy forwards it, decided once.
func arrivalRounds(tb *policy.TurnBudget) harness.ViewPolicy {
	return harness.ViewPolicyFunc(func(ctx context.Context, v *harness.View) error {
		type key struct{ turn, round int }
		var order []key
		byRound := map[key][]int{}
		for i, m := range v.Messages {
			if o := v.Origins[i]; m.Role == harness.RoleTool && o.Turn > 0 {
				k := key{o.Turn, o.Round}
				if _, seen := byRound[k]; !seen {
					order = append(order, k)
				}
				byRound[k] = append(byRound[k], i)
			}
		}
		// The view lists messages in order, so a turn's rounds come in
		// order and after the earlier turns'.
		spent := map[int]int{}
		for _, k := range order {
			shown, err := arriveRound(ctx, tb, v, k.turn, byRound[k], spent[k.turn])
			if err != nil {
				return err
			}
			spent[k.turn] += shown
		}
		return nil
	})
}

// arriveRound trims the tool messages idx of v, one round of turn, to
// what the turn's budget has left after spent, and returns what they show.
func arriveRound(ctx context.Context, tb *policy.TurnBudget, v *harness.View, turn int, idx []int, spent int) (int, error) {
	sub := &harness.View{Turn: &harness.Turn{Index: turn}}
	if v.Turn != nil && v.Turn.Index == turn {
		sub.Turn = v.Turn
	}
	for _, i := range idx {
		sub.Messages, sub.Origins = append(sub.Messages, v.Messages[i]), append(sub.Origins, v.Origins[i])
	}
	shown, err := tb.Arrive(ctx, sub, spent)
	if err != nil {
		return 0, fmt.Errorf("bench: turn budget on arrival: %w", err)
	}
	for j, i := range idx {
		for _, c := range sub.Origins[j].Cuts[len(v.Origins[i].Cuts):] {
			if err := v.Replace(i, []harness.Part{harness.TextPart(sub.Messages[j].Text())}, c); err != nil {
				return 0, fmt.Errorf("bench: turn budget on arrival: %w", err)
			}
		}
	}
	return shown, nil
}
