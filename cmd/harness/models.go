package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/provider/anthropic"
	"github.com/agentharness/harness/provider/openai"
	"github.com/agentharness/harness/provider/scripted"
)

// modelSpecHelp documents the --model flag.
const modelSpecHelp = "model to use: scripted:FILE, openai:MODEL or anthropic:MODEL"

// newModel maps a --model value to a harness.Model.
func newModel(ctx context.Context, e *env, cfg *runConfig) (harness.Model, error) {
	provider, name, ok := strings.Cut(cfg.model, ":")
	if !ok || name == "" {
		return nil, fmt.Errorf("%w: --model %q: want PROVIDER:NAME, one of scripted:FILE, openai:MODEL, anthropic:MODEL", errUsage, cfg.model)
	}
	switch provider {
	case "scripted":
		if cfg.baseURL != "" {
			return nil, fmt.Errorf("%w: --base-url applies to openai and anthropic models, not %s", errUsage, cfg.model)
		}
		s, err := scripted.Load(name)
		if err != nil {
			return nil, err
		}
		return scripted.New(s, &scripted.Options{Counter: cfg.countTokens}), nil
	case "openai":
		// Keys and base URL come from e.getenv, so tests run the CLI with
		// an environment of their own.
		m, err := openai.New(&openai.Options{Model: name, BaseURL: cfg.baseURL, Getenv: e.getenv})
		if err != nil {
			return nil, err
		}
		return m, nil
	case "anthropic":
		m, err := anthropic.New(&anthropic.Options{Model: name, BaseURL: cfg.baseURL, Getenv: e.getenv})
		if err != nil {
			return nil, err
		}
		return m, nil
	}
	return nil, fmt.Errorf("%w: --model %q: unknown provider %q (want scripted, openai or anthropic)", errUsage, cfg.model, provider)
}
