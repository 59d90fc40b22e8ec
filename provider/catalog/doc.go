// Package catalog holds what providers publish about their models and what
// harness prices or bounds requests by: per-model list prices, price models
// for replays, prompt-cache lifetimes, context windows, and how an image is
// counted in tokens.
//
// It imports nothing else from this module, so the guards, policies, proxy,
// importers and bench all read one copy of each fact.
package catalog
