package benchlab

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/internal/benchcore"
	"github.com/agentharness/harness/internal/replayengine"
)

// namedRule is an idea for a task about one file: a file the turn's input
// names ("based on the style guide at docs/style-guide.md, write …") is
// the task's material, which the agent will use whole, so its read keeps
// up to a higher ceiling. It reads only the past: the turn's input and
// the call's arguments.
type namedRule struct{ ceiling int }

// namedPresets are the named-file rules measured against harness's
// defaults.
func namedPresets() []Preset {
	var out []Preset
	for _, k := range []int{64, 128} {
		out = append(out, Preset{Name: fmt.Sprintf("harness+named/%dk", k), Ablation: true, Build: namedRule{ceiling: k << 10}.build,
			Doc: fmt.Sprintf("harness whose ceiling is %d KiB instead of 24 KiB for a read of a file the turn's input names (its base name)", k)})
	}
	return out
}

// build is harness's defaults with the result ceiling switched by
// whether the call reads a file the turn's input names.
func (r namedRule) build(env replayengine.Env) (*replayengine.Config, error) {
	h := benchcore.DefaultHarness()
	h.Stack.NoCeiling = true
	cfg, err := h.Build(env)
	if err != nil {
		return nil, err
	}
	named, other := (&guard.ResultPolicy{MaxBytes: r.ceiling}).Guard(), (&guard.ResultPolicy{}).Guard()
	sw := func(next harness.ToolFunc) harness.ToolFunc {
		n, o := named(next), other(next)
		return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			if readsNamedFile(ctx, call) {
				return n(ctx, call)
			}
			return o(ctx, call)
		}
	}
	cfg.Guards = append([]harness.Guard{sw}, cfg.Guards...)
	return cfg, nil
}

// fileArgs are the argument names file readers give the path they read.
var fileArgs = []string{"file_path", "path", "filename", "file", "absolute_path", "target_file"}

// readsNamedFile reports whether call's arguments name a file whose base
// name (at least 5 bytes, with an extension) the input of the call's turn
// holds.
func readsNamedFile(ctx context.Context, call *harness.ToolCall) bool {
	info, ok := harness.CallInfoFrom(ctx)
	if !ok || info.Transcript == nil || call == nil {
		return false
	}
	var input string
	for _, t := range info.Transcript.Turns {
		if t != nil && t.Index == info.Turn {
			input = t.Input
		}
	}
	if input == "" {
		return false
	}
	var args map[string]any
	if json.Unmarshal(call.Args, &args) != nil {
		return false
	}
	for _, k := range fileArgs {
		p, _ := args[k].(string)
		base := path.Base(strings.ReplaceAll(p, `\`, "/"))
		if len(base) >= 5 && strings.Contains(base, ".") && strings.Contains(input, base) {
			return true
		}
	}
	return false
}
