package postgres

import (
	"context"
	"testing"
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
