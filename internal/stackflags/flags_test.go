package stackflags

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

// TestClearWhenIdle: --clear-when-idle reads auto, off and durations,
// refuses junk at parse time with what it wants and a negative duration
// as a usage error, and gives compaction the threshold for the run's
// model (auto: catalog.CacheLifetime).
func TestClearWhenIdle(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		model   string
		want    time.Duration
		parse   string // a parse error containing this
		usage   bool
		printed string
	}{
		{args: nil, model: "claude-sonnet-4-5", want: 5 * time.Minute, printed: "auto"},
		{args: nil, model: "gpt-5-mini", want: time.Hour, printed: "auto"},
		{args: []string{"--clear-when-idle", "auto"}, model: "claude-sonnet-4-5", want: 5 * time.Minute, printed: "auto"},
		{args: []string{"--clear-when-idle", "auto"}, model: "gpt-5.2-codex", want: time.Hour, printed: "auto"},
		{args: []string{"--clear-when-idle", "auto"}, model: "deepseek-chat", want: 0, printed: "auto"},
		{args: []string{"--clear-when-idle", "off"}, model: "claude-sonnet-4-5", want: 0, printed: "off"},
		{args: []string{"--clear-when-idle", "0"}, model: "claude-sonnet-4-5", want: 0, printed: "off"},
		{args: []string{"--clear-when-idle", "15m"}, model: "gpt-4o", want: 15 * time.Minute, printed: "15m0s"},
		{args: []string{"--clear-when-idle", "auto", "--clear-when-idle", "2h"}, model: "claude-opus-4-6", want: 2 * time.Hour, printed: "2h0m0s"},
		{args: []string{"--clear-when-idle", "soon"}, parse: "want auto, off or a duration such as 5m or 1h"},
		{args: []string{"--clear-when-idle", "Auto"}, parse: "want auto, off or a duration"},
		{args: []string{"--clear-when-idle", "-1s"}, usage: true},
	} {
		var p Flags
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		p.Register(fs)
		err := fs.Parse(tc.args)
		if tc.parse != "" {
			if err == nil || !strings.Contains(err.Error(), tc.parse) || !strings.Contains(err.Error(), "clear-when-idle") {
				t.Errorf("%v: parse error %v, want one naming the flag and %q", tc.args, err, tc.parse)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		c, err := p.Config(tc.model, nil, nil, nil)
		if tc.usage {
			if !errors.Is(err, ErrUsage) {
				t.Errorf("%v: err %v, want a usage error", tc.args, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got := c.Compact.IdleAfter(); got != tc.want {
			t.Errorf("%v on %s: ClearWhenIdle %v, want %v", tc.args, tc.model, got, tc.want)
		}
		if got := fs.Lookup("clear-when-idle").Value.String(); got != tc.printed {
			t.Errorf("%v: the flag prints %q, want %q", tc.args, got, tc.printed)
		}
	}
}

// FuzzIdleClearSet: --clear-when-idle's parser never panics, and what it
// accepts prints back to a value that parses to the same.
func FuzzIdleClearSet(f *testing.F) {
	for _, s := range []string{"auto", "off", "0", "5m", "1h30m", "-1s", "soon", "", "AUTO", "9223372036854775807ns"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v IdleClear
		if v.Set(s) != nil {
			return
		}
		var back IdleClear
		if err := back.Set(v.String()); err != nil || back != v {
			t.Errorf("Set(%q) = %+v prints %q, which reads back as %+v (%v)", s, v, v.String(), back, err)
		}
	})
}
