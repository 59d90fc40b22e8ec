package tokens

import (
	"context"

	"github.com/agentharness/harness"
)

// Calibrate wraps m so that every successful call feeds cal: the request is
// counted with c before it is sent and the provider's reported input tokens
// (Usage.Input) are observed against that count under name (or, when name
// is "", the model name the provider reports). The wrapper keeps
// streaming: if m is a [harness.StreamingModel], so is the result.
func Calibrate(m harness.Model, name string, c Counter, cal *Calibrator) harness.Model {
	base := calibrating{m: m, name: name, c: c, cal: cal}
	if sm, ok := m.(harness.StreamingModel); ok {
		return &calibratingStream{calibrating: base, sm: sm}
	}
	return &base
}

type calibrating struct {
	m    harness.Model
	name string
	c    Counter
	cal  *Calibrator
}

func (w *calibrating) Generate(ctx context.Context, req *harness.Request) (*harness.Response, error) {
	counted := CountRequest(w.c, req)
	resp, err := w.m.Generate(ctx, req)
	w.observe(counted, resp, err)
	return resp, err
}

func (w *calibrating) observe(counted int, resp *harness.Response, err error) {
	if err != nil || resp == nil {
		return
	}
	name := w.name
	if name == "" {
		name = resp.Model
	}
	w.cal.observe(name, counted, resp.Usage.Input)
}

type calibratingStream struct {
	calibrating
	sm harness.StreamingModel
}

func (w *calibratingStream) GenerateStream(ctx context.Context, req *harness.Request, onText func(string)) (*harness.Response, error) {
	counted := CountRequest(w.c, req)
	resp, err := w.sm.GenerateStream(ctx, req, onText)
	w.observe(counted, resp, err)
	return resp, err
}
