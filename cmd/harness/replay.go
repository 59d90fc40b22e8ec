package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/benchcore"
	"github.com/agentharness/harness/internal/replayengine"
	"github.com/agentharness/harness/replay"
)

// cmdReplay replays one recorded transcript under one preset. A transcript
// store (harness's .db file) is replayed conversation by conversation.
func cmdReplay(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "replay", "FILE", "Replay a recorded transcript (a Claude Code session or claude -p's json or stream-json output, a Codex CLI rollout or codex exec --json output, a SWE-agent .traj, an OpenHands\n"+
		"trajectory or output.jsonl, a Gemini\n"+
		"CLI chat, mini-swe-agent *.traj.json, OpenAI or Anthropic chat messages or Responses input items as JSON or JSONL, a harness conversation,\n"+
		"or harness's transcript store .harness/harness.db: every conversation in it)\n"+
		"under a policy preset, with no model, and print what it would have cost, the prompt cache priced as\n"+
		"bench prices it (--cache-ttl).")
	policy := fs.String("policy", "harness", "preset to replay under: "+joinNames(benchcore.PresetNames()))
	emit := fs.String("emit", "", "write one JSON line per model call and per tool result to this file (one conversation)")
	convID := fs.String("conversation", "", "replay only this conversation of a transcript store (or this model context of a Claude Code or Codex file)")
	ttl := cacheTTLFlag(fs)
	sf := addSupplyFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: want exactly one FILE (bench and audit take several, and folders)", errUsage)
	}
	if *ttl < 0 {
		return fmt.Errorf("%w: --cache-ttl %v: want a lifetime ≥ 0 (0: the cache never expires)", errUsage, *ttl)
	}
	preset, err := bench.Lookup(*policy)
	if err != nil {
		return fmt.Errorf("%w: --policy: %s", errUsage, strings.TrimPrefix(err.Error(), "bench: "))
	}
	if err := checkPaths(pos); err != nil {
		return err
	}
	if st, err := os.Stat(pos[0]); err != nil {
		return err
	} else if st.IsDir() {
		return fmt.Errorf("%w: replay takes a FILE; %s is a folder (use bench or audit for folders)", errUsage, pos[0])
	}
	supply, err := sf.supply()
	if err != nil {
		return err
	}
	recs, skipped, err := replay.LoadWith(ctx, supply, pos[0])
	if err != nil {
		return err
	}
	if len(skipped) > 0 {
		return skipped[0].Err
	}
	if *convID != "" {
		var picked []*replay.Recording
		for _, r := range recs {
			if r.ID == *convID {
				picked = append(picked, r)
			}
		}
		if len(picked) == 0 {
			return fmt.Errorf("%s holds no conversation %q", pos[0], *convID)
		}
		recs = picked
	}
	if len(recs) == 0 {
		return fmt.Errorf("%s holds no conversation", pos[0])
	}
	if *emit != "" && len(recs) > 1 {
		return fmt.Errorf("%w: --emit writes one conversation and %s holds %d: pick one with --conversation", errUsage, pos[0], len(recs))
	}
	printWarnings(e, recs)
	for _, rec := range recs {
		if err := replayOne(ctx, e, rec, preset, *ttl, *emit); err != nil {
			return err
		}
	}
	return nil
}

// replayOne replays rec under preset and prints its line (and writes its
// --emit file when emit is set). The cache is priced as bench prices it
// (--cache-ttl): the preset is told the lifetime, and a request after a
// longer recorded pause pays its prefix uncached, so the figures of two
// presets compare as bench's do (ttl 0: a cache that never expires).
func replayOne(ctx context.Context, e *env, rec *replay.Recording, preset bench.Preset, ttl time.Duration, emit string) error {
	rep, err := replayengine.Replay(ctx, rec, preset.Policy(), &replayengine.Options{KeepText: emit != "", CacheTTL: ttl, NoCacheExpiry: ttl == 0})
	if err != nil {
		return err
	}
	rep.PriceCold(replayengine.IdleGaps(rec), ttl)
	if emit != "" {
		if err := writeEmit(emit, rep); err != nil {
			return err
		}
	}
	u := rep.Usage
	fmt.Fprintf(e.stdout, "%s under %s: %d model calls (%d skipped after a stop); tokens in %d (cached %d), out %d, effective %.1f; evidence retention %d/%d visible, %d/%d recoverable; %s\n",
		rec.ID, preset.Name, len(rep.Calls), rep.SkippedCalls, u.Input, u.Cached, u.Output, rep.Effective,
		rep.Visible, rep.Needles, rep.Recoverable, rep.Needles, benchcore.CacheNote(ttl))
	return nil
}

// emitCall and emitResult are the JSON lines of --emit.
type emitCall struct {
	Kind          string  `json:"kind"`
	Index         int     `json:"index"`
	InputTokens   int     `json:"input_tokens"`
	CachedTokens  int     `json:"cached_tokens"`
	EvidenceChars int     `json:"evidence_chars"`
	Shown         [][]any `json:"shown"`
}

type emitResult struct {
	Kind      string `json:"kind"`
	CallID    string `json:"call_id"`
	Tool      string `json:"tool"`
	FullChars int    `json:"full_chars"`
	ModelText string `json:"model_text"`
}

// writeEmit writes the calls and results in conversation order: each
// call's line, then the lines of the results its response produced.
func writeEmit(path string, rep *replayengine.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--emit: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	ri := 0
	for _, c := range rep.Calls {
		line := emitCall{Kind: "call", Index: c.Index, InputTokens: c.Input, CachedTokens: c.Cached, EvidenceChars: c.EvidenceChars, Shown: [][]any{}}
		for _, s := range c.Shown {
			line.Shown = append(line.Shown, []any{s.CallID, s.State, s.Chars})
		}
		if err := enc.Encode(line); err != nil {
			f.Close()
			return fmt.Errorf("--emit: %w", err)
		}
		for ri < len(rep.Results) && rep.Results[ri].Turn == c.Turn && rep.Results[ri].Round == c.Round {
			r := rep.Results[ri]
			if err := enc.Encode(emitResult{Kind: "result", CallID: r.CallID, Tool: r.Tool, FullChars: r.FullChars, ModelText: r.ModelText}); err != nil {
				f.Close()
				return fmt.Errorf("--emit: %w", err)
			}
			ri++
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("--emit: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--emit: %w", err)
	}
	return nil
}

func joinNames(names []string) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}
