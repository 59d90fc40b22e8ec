package main

import (
	"errors"
	"flag"
	"io"
	"testing"

	"github.com/agentharness/harness/guard"
)

func TestPolicyFlagsClearOld(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    int  // CompactPolicy.ClearOld
		compact bool // a CompactPolicy is built
		usage   bool
	}{
		{args: nil, want: guard.DefaultCompactClearOld, compact: true},
		{args: []string{"--clear-old", "30000"}, want: 30000, compact: true},
		{args: []string{"--clear-old", "0"}, want: -1, compact: true},
		{args: []string{"--no-compact"}},
		{args: []string{"--clear-old", "-1"}, usage: true},
	} {
		var p policyFlags
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		p.register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		_, policies, err := p.build("m", nil, nil, nil)
		if tc.usage {
			if !errors.Is(err, errUsage) {
				t.Errorf("%v: err %v, want a usage error", tc.args, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		var cp *guard.CompactPolicy
		for _, pol := range policies {
			if c, ok := pol.(*guard.CompactPolicy); ok {
				cp = c
			}
		}
		if (cp != nil) != tc.compact {
			t.Fatalf("%v: compact policy built %v, want %v", tc.args, cp != nil, tc.compact)
		}
		if cp != nil && cp.ClearOld != tc.want {
			t.Errorf("%v: ClearOld %d, want %d", tc.args, cp.ClearOld, tc.want)
		}
	}
}
