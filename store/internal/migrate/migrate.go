// Package migrate is how the transcript stores (store/sqlite,
// store/postgres) bring a database's schema up to date: a history of
// numbered steps, each applied once and recorded in schema_migrations,
// and a database written by a newer harness refused. Each store keeps its
// steps' SQL and decides the transactions: SQLite applies each step in its
// own write transaction, PostgreSQL all of them in one under an advisory
// lock.
package migrate

import (
	"context"
	"fmt"
	"time"
)

// Step is one step of a schema. Steps are applied in order and never
// edited once released: a change is a new step.
type Step struct {
	Version int
	Name    string
	SQL     string
}

// Latest is the version of the last of steps: the version a store writes.
func Latest(steps []Step) int { return steps[len(steps)-1].Version }

// Due returns the steps above version have, up to target (to the last
// when target is 0 or less), in order.
func Due(steps []Step, have, target int) []Step {
	if target <= 0 {
		target = Latest(steps)
	}
	var out []Step
	for _, s := range steps {
		if s.Version > have && s.Version <= target {
			out = append(out, s)
		}
	}
	return out
}

// CheckNewest refuses a database whose newest applied step is one steps
// do not know.
func CheckNewest(newest int, steps []Step) error {
	if newest > Latest(steps) {
		return fmt.Errorf("the database has schema version %d, newer than this harness knows (%d): upgrade harness", newest, Latest(steps))
	}
	return nil
}

// Exec runs one statement with args in the caller's transaction.
type Exec func(ctx context.Context, sql string, args ...any) error

// Apply runs s's SQL and records it in schema_migrations, with exec.
func Apply(ctx context.Context, exec Exec, s Step) error {
	if err := exec(ctx, s.SQL); err != nil {
		return fmt.Errorf("migration %d (%s): %w", s.Version, s.Name, err)
	}
	if err := exec(ctx, `INSERT INTO schema_migrations (version, name, applied_ns) VALUES ($1, $2, $3)`,
		s.Version, s.Name, time.Now().UnixNano()); err != nil {
		return fmt.Errorf("migration %d: %w", s.Version, err)
	}
	return nil
}
