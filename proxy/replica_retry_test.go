package proxy

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentharness/harness/store"
)

// brokenConnsClaimer is a claim log whose first broken calls fail as
// calls on connections a database restart broke do, while the database
// answers again.
type brokenConnsClaimer struct {
	broken, calls int
}

func (b *brokenConnsClaimer) fail() error {
	b.calls++
	if b.calls <= b.broken {
		return errors.New("write failed: write unix: broken pipe")
	}
	return nil
}

func (b *brokenConnsClaimer) Claim(_ context.Context, _ string, entries []store.Claim) ([]store.Claim, error) {
	if err := b.fail(); err != nil {
		return nil, err
	}
	out := make([]store.Claim, len(entries))
	for i, e := range entries {
		out[i] = store.Claim{Seq: int64(i + 1), Key: e.Key, Value: e.Value, Won: true}
	}
	return out, nil
}

func (b *brokenConnsClaimer) Claims(context.Context, string, int64) ([]store.Claim, error) {
	return nil, b.fail()
}

// TestClaimThroughBrokenConnections: a claim that fails on connections a
// restart broke, one after another, while the store answers, is tried
// again until a connection works, up to brokenConns times, and opens no
// outage (which would skip the next calls and send the request's new
// results unchanged: a cache break for each). Before, it was tried once
// more only, and a second broken connection opened an outage.
func TestClaimThroughBrokenConnections(t *testing.T) {
	tests := []struct {
		broken int
		wantOK bool
	}{{0, true}, {2, true}, {brokenConns, true}, {brokenConns + 1, false}}
	for _, tt := range tests {
		log := &bytes.Buffer{}
		c := &brokenConnsClaimer{broken: tt.broken}
		p := &Proxy{opts: Options{Log: log}, replicas: &replicas{log: c, id: "r1"},
			rec: &recorder{probe: func(context.Context) error { return nil }}}
		_, ok := p.claim(context.Background(), "c1", []string{"d|call|00"}, []claimValue{{Text: "x"}})
		if ok != tt.wantOK {
			t.Errorf("%d broken connections: claimed %v, want %v (log: %s)", tt.broken, ok, tt.wantOK, log)
		}
		if down := strings.Contains(log.String(), "does not answer"); down == tt.wantOK {
			t.Errorf("%d broken connections: outage logged %v, want %v", tt.broken, down, !tt.wantOK)
		}
	}
}

// brokenConnsStore is a store whose claim log fails as brokenConnsClaimer's.
type brokenConnsStore struct {
	store.Store
	*brokenConnsClaimer
}

// TestProbeThroughBrokenConnections: the probe that tells a store that
// does not answer from a call that failed on its own reads again through
// connections a restart broke, so the recorder and the claim log declare
// no outage (which skips claims for a moment) while the store answers.
func TestProbeThroughBrokenConnections(t *testing.T) {
	tests := []struct {
		broken   int
		wantDown bool
	}{{0, false}, {brokenConns, false}, {brokenConns + 1, true}}
	for _, tt := range tests {
		probe := storeProbe(brokenConnsStore{brokenConnsClaimer: &brokenConnsClaimer{broken: tt.broken}})
		if down := probe(context.Background()) != nil; down != tt.wantDown {
			t.Errorf("%d broken connections: probe failed %v, want %v", tt.broken, down, tt.wantDown)
		}
	}
}
