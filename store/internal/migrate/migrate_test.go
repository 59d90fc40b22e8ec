package migrate

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

var steps = []Step{{1, "one", "A"}, {2, "two", "B"}, {3, "three", "C"}}

func versions(ss []Step) []int {
	var out []int
	for _, s := range ss {
		out = append(out, s.Version)
	}
	return out
}

func TestDue(t *testing.T) {
	tests := []struct {
		have, target int
		want         []int
	}{
		{0, 0, []int{1, 2, 3}},
		{0, 2, []int{1, 2}},
		{1, 0, []int{2, 3}},
		{3, 0, nil},
		{2, 1, nil},
		{5, 0, nil},
	}
	for _, tt := range tests {
		if got := versions(Due(steps, tt.have, tt.target)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Due(have %d, target %d) = %v, want %v", tt.have, tt.target, got, tt.want)
		}
	}
}

func TestCheckNewest(t *testing.T) {
	for newest, ok := range map[int]bool{0: true, 3: true, 4: false} {
		if err := CheckNewest(newest, steps); (err == nil) != ok {
			t.Errorf("CheckNewest(%d) = %v", newest, err)
		}
	}
	if err := CheckNewest(9, steps); err == nil || !strings.Contains(err.Error(), "upgrade harness") {
		t.Errorf("a newer database says %v", err)
	}
}

// TestApply runs the step and then records it; a failing step records
// nothing and names the step.
func TestApply(t *testing.T) {
	var ran []string
	exec := func(_ context.Context, sql string, args ...any) error {
		if sql == "bad" {
			return errors.New("syntax")
		}
		ran = append(ran, sql)
		return nil
	}
	if err := Apply(context.Background(), exec, steps[1]); err != nil || len(ran) != 2 || ran[0] != "B" ||
		!strings.HasPrefix(ran[1], "INSERT INTO schema_migrations") {
		t.Fatalf("Apply ran %q, %v", ran, err)
	}
	ran = nil
	err := Apply(context.Background(), exec, Step{4, "four", "bad"})
	if err == nil || !strings.Contains(err.Error(), "migration 4 (four)") || len(ran) != 0 {
		t.Errorf("a failing step: %v, ran %q", err, ran)
	}
}
