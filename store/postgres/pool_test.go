package postgres

import (
	"context"
	"testing"
	"time"
)

// TestPoolSize: the write pool holds Options.MaxConns connections when
// given, else the connection string's pool_max_conns, else 32.
func TestPoolSize(t *testing.T) {
	dsn := server.DSN(t)
	for _, tc := range []struct {
		name string
		dsn  string
		opts *Options
		want int32
	}{
		{"default", dsn, nil, defaultMaxConns},
		{"connection string", dsn + "&pool_max_conns=3", nil, 3},
		{"options win", dsn + "&pool_max_conns=3", &Options{MaxConns: 5}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := open(context.Background(), tc.dsn, tc.opts, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := s.pool.Config().MaxConns; got != tc.want {
				t.Errorf("write pool of %d connections, want %d", got, tc.want)
			}
		})
	}
}

// TestWarmReads: with Options.WarmReads the pool for reads and claims
// opens its connections without a read asking for them; without it, it
// opens none until one does. A connection string's pool_min_conns above
// that pool's size is capped to it, not refused.
func TestWarmReads(t *testing.T) {
	dsn := server.DSN(t)
	for _, tc := range []struct {
		name string
		dsn  string
		opts *Options
		want int32
	}{
		{"warm", dsn, &Options{WarmReads: true}, readConns},
		{"cold", dsn, nil, 0},
		{"pool_min_conns capped", dsn + "&pool_min_conns=20", &Options{MaxConns: 30}, readConns},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := open(context.Background(), tc.dsn, tc.opts, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			// The pool opens them in the background: wait for them with a
			// bound that only catches a pool that never does.
			deadline := time.Now().Add(time.Minute)
			for s.reads.Stat().TotalConns() < tc.want && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if got := s.reads.Stat().TotalConns(); got != tc.want {
				t.Errorf("%d connections for reads open, want %d", got, tc.want)
			}
		})
	}
}
