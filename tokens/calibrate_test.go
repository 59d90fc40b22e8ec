package tokens

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

func TestCalibratorClampAndSmooth(t *testing.T) {
	c := NewCalibrator()
	if f := c.Factor("m"); f != 1 {
		t.Fatalf("initial factor %v", f)
	}
	if f := c.observe("m", 10, 100); f != 1 {
		t.Fatalf("observation under MinCounted changed factor: %v", f)
	}
	if f := c.observe("m", 1000, 5000); f != maxFactor {
		t.Fatalf("factor not clamped high: %v", f)
	}
	if f := c.observe("m", 1000, 0); f != maxFactor {
		t.Fatalf("zero report changed factor: %v", f)
	}
	// EMA toward 1.0 with alpha 0.3: 2 + 0.3·(1−2) = 1.7.
	if f := c.observe("m", 1000, 1000); math.Abs(f-1.7) > 1e-9 {
		t.Fatalf("EMA step = %v, want 1.7", f)
	}
	if f := c.observe("low", 1000, 100); f != minFactor {
		t.Fatalf("factor not clamped low: %v", f)
	}
	if c.Factor("other") != 1 || c.observations("m") != 2 {
		t.Fatal("models not kept apart")
	}
	if got := c.scale("low", 101); got != 51 {
		t.Fatalf("Scale rounds up: %d", got)
	}
	c.Set("x", 9)
	if c.Factor("x") != maxFactor {
		t.Fatal("Set not clamped")
	}
}

// A model whose tokenizer yields 1.3× the o200k count: the calibrator,
// fed through the Calibrate wrapper, converges on 1.3 from a wrong start.
func TestCalibrateConverges(t *testing.T) {
	c := mustO200k(t)
	cal := NewCalibrator()
	cal.Set("claude-x", 0.8) // a stale factor from an earlier run
	inner := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		counted := CountRequest(c, req)
		return &harness.Response{
			Message: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("ok")}},
			Usage:   harness.Usage{Input: int(math.Round(1.3 * float64(counted))), Output: 1},
		}, nil
	})
	m := Calibrate(inner, "claude-x", c, cal)
	if _, ok := m.(harness.StreamingModel); ok {
		t.Fatal("non-streaming model became streaming")
	}
	var prev = math.Inf(1)
	for i := range 20 {
		req := &harness.Request{Messages: []harness.Message{{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart(strings.Repeat("The quick brown fox. ", 20+i*7))}}}}
		if _, err := m.Generate(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		d := math.Abs(cal.Factor("claude-x") - 1.3)
		if d > prev+1e-3 {
			t.Fatalf("round %d: diverging (%v > %v)", i, d, prev)
		}
		prev = d
	}
	if f := cal.Factor("claude-x"); math.Abs(f-1.3) > 0.01 {
		t.Fatalf("factor = %v, want ≈1.3", f)
	}
}

type streamer struct{ harness.ModelFunc }

func (s streamer) GenerateStream(ctx context.Context, req *harness.Request, onText func(string)) (*harness.Response, error) {
	onText("ok")
	return s.Generate(ctx, req)
}

func TestCalibrateKeepsStreaming(t *testing.T) {
	c := mustO200k(t)
	cal := newCalibrator(0.3, 1)
	inner := streamer{func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		return &harness.Response{Model: "reported-name", Usage: harness.Usage{Input: 2 * CountRequest(c, req)}}, nil
	}}
	m := Calibrate(inner, "", c, cal)
	sm, ok := m.(harness.StreamingModel)
	if !ok {
		t.Fatal("streaming lost")
	}
	var got string
	req := &harness.Request{Messages: []harness.Message{{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart("hello world")}}}}
	if _, err := sm.GenerateStream(context.Background(), req, func(s string) { got += s }); err != nil {
		t.Fatal(err)
	}
	if got != "ok" || cal.Factor("reported-name") != 2 {
		t.Fatalf("text %q factor %v", got, cal.Factor("reported-name"))
	}
}
