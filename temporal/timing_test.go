package temporal_test

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
	htemporal "github.com/agentharness/harness/temporal"
)

// storeClock sums, per conversation, the time workers spend in store and
// journal calls, and counts the calls a busy conversation refused. A
// conversation runs one turn at a time, so what it holds between two
// takes is one turn's.
type storeClock struct {
	mu    sync.Mutex
	spent map[string]time.Duration
	busy  int
}

func newStoreClock() *storeClock { return &storeClock{spent: map[string]time.Duration{}} }

// since adds the time since t0 to conv, and counts err if it is a busy
// refusal.
func (c *storeClock) since(conv string, t0 time.Time, err error) {
	d := time.Since(t0)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spent[conv] += d
	if errors.Is(err, store.ErrConversationBusy) {
		c.busy++
	}
}

// take returns conv's time since the last take.
func (c *storeClock) take(conv string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.spent[conv]
	delete(c.spent, conv)
	return d
}

// refused returns the busy refusals counted.
func (c *storeClock) refused() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.busy
}

// timedStore times the store calls a turn's steps make.
type timedStore struct {
	store.Store
	clock *storeClock
}

func (s *timedStore) Load(ctx context.Context, id string) (*harness.Conversation, error) {
	t0 := time.Now()
	conv, err := s.Store.Load(ctx, id)
	s.clock.since(id, t0, err)
	return conv, err
}

func (s *timedStore) BeginTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	t0 := time.Now()
	err := s.Store.BeginTurn(ctx, conv, turn)
	s.clock.since(conv.ID, t0, err)
	return err
}

func (s *timedStore) AddRound(ctx context.Context, conv *harness.Conversation, turn *harness.Turn, r *harness.Round) error {
	t0 := time.Now()
	err := s.Store.AddRound(ctx, conv, turn, r)
	s.clock.since(conv.ID, t0, err)
	return err
}

func (s *timedStore) EndTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	t0 := time.Now()
	err := s.Store.EndTurn(ctx, conv, turn)
	s.clock.since(conv.ID, t0, err)
	return err
}

func (s *timedStore) ResumeTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	t0 := time.Now()
	err := s.Store.(store.TurnResumer).ResumeTurn(ctx, conv, turn)
	s.clock.since(conv.ID, t0, err)
	return err
}

// timedJournal times the journal calls.
type timedJournal struct {
	htemporal.Journal
	clock *storeClock
}

func (j *timedJournal) Put(ctx context.Context, k htemporal.Key, v []byte) ([]byte, error) {
	t0 := time.Now()
	out, err := j.Journal.Put(ctx, k, v)
	j.clock.since(k.Conversation, t0, err)
	return out, err
}

func (j *timedJournal) Get(ctx context.Context, k htemporal.Key) ([]byte, bool, error) {
	t0 := time.Now()
	out, ok, err := j.Journal.Get(ctx, k)
	j.clock.since(k.Conversation, t0, err)
	return out, ok, err
}

func (j *timedJournal) DeleteTurn(ctx context.Context, conv string, turn int) error {
	t0 := time.Now()
	err := j.Journal.DeleteTurn(ctx, conv, turn)
	j.clock.since(conv, t0, err)
	return err
}

func (s *timedStore) SuspendTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	t0 := time.Now()
	err := s.Store.(store.TurnResumer).SuspendTurn(ctx, conv, turn)
	s.clock.since(conv.ID, t0, err)
	return err
}
