// Package telemetry turns an agent's events into OpenTelemetry traces and
// metrics that follow the GenAI semantic conventions: an `invoke_agent`
// span per turn, a `chat {model}` span per model call and an
// `execute_tool {name}` span per tool call, with token usage (input
// including cached, cache reads, output), tool names and call ids, and the
// `gen_ai.client.token.usage` and `gen_ai.client.operation.duration`
// histograms. harness's own attributes say what a guard cut: bytes in and
// shown, the kind of cut and where the full payload is (`harness.cut.*`).
//
// It is an [harness.Observer] wrapper, so the agent loop does not know it
// exists:
//
//	tel, _ := telemetry.New(&telemetry.Options{TracerProvider: tp, MeterProvider: mp, Provider: "openai", Model: "gpt-4.1"})
//	opts.Observer = tel(opts.Observer)
//
// Nothing is recorded unless providers are given; the CLI builds them from
// the standard OTEL_* environment variables (off by default).
package telemetry

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/semconv/v1.40.0/genaiconv"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/agentharness/harness"
)

// scopeName is the instrumentation scope of the tracer and meter.
const scopeName = "github.com/agentharness/harness/telemetry"

// harness's own attributes, beside the GenAI conventions.
const (
	attrBytesIn    = attribute.Key("harness.result.bytes_in")    // the full payload's size
	attrBytesShown = attribute.Key("harness.result.bytes_shown") // what the model is shown of it
	attrTimedOut   = attribute.Key("harness.tool.timed_out")
	attrCutKind    = attribute.Key("harness.cut.kind")    // spilled, truncated, deduped, …: the last cut
	attrCutBy      = attribute.Key("harness.cut.by")      // the guard that made it
	attrCutLocator = attribute.Key("harness.cut.locator") // where the full payload is read back
	attrCuts       = attribute.Key("harness.cut.count")
	attrOutcome    = attribute.Key("harness.turn.outcome")
	attrTurn       = attribute.Key("harness.turn")
	attrRound      = attribute.Key("harness.round")
	attrEvidence   = attribute.Key("harness.request.evidence_chars")
	attrToolsSent  = attribute.Key("harness.request.tools")
	attrToolBytes  = attribute.Key("harness.request.tool_bytes")
)

// Options configure [New]. Nil providers record nothing.
type Options struct {
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// Provider is gen_ai.provider.name ("openai", "anthropic", …).
	Provider string
	// Model is gen_ai.request.model, and names the chat spans.
	Model string
	// AgentName is gen_ai.agent.name on the turn spans (default "harness").
	AgentName string
}

// recorder records one agent's events. It is safe for concurrent use,
// as an Observer must be.
type recorder struct {
	opts     Options
	tracer   trace.Tracer
	tokens   genaiconv.ClientTokenUsage
	duration genaiconv.ClientOperationDuration

	mu    sync.Mutex
	turns map[turnKey]*turnSpans
}

type turnKey struct {
	conv string
	turn int
}

// turnSpans are the open spans of one turn.
type turnSpans struct {
	ctx   context.Context // carries the turn span
	span  trace.Span
	chats map[int]chatSpan // by round
}

type chatSpan struct {
	span  trace.Span
	start time.Time
}

// New returns middleware for an agent's Observer that records on the
// given providers (nil options: no-op providers): the observer it returns
// records each event, then passes it to next (which may be nil). Every
// observer it returns shares one record of the open spans, so it is safe
// for concurrent use.
func New(opts *Options) (func(next harness.Observer) harness.Observer, error) {
	t := &recorder{turns: map[turnKey]*turnSpans{}}
	if opts != nil {
		t.opts = *opts
	}
	if t.opts.AgentName == "" {
		t.opts.AgentName = "harness"
	}
	tp, mp := t.opts.TracerProvider, t.opts.MeterProvider
	if tp == nil {
		tp = tracenoop.NewTracerProvider()
	}
	if mp == nil {
		mp = metricnoop.NewMeterProvider()
	}
	t.tracer = tp.Tracer(scopeName)
	meter := mp.Meter(scopeName)
	var err error
	if t.tokens, err = genaiconv.NewClientTokenUsage(meter); err != nil {
		return nil, err
	}
	if t.duration, err = genaiconv.NewClientOperationDuration(meter); err != nil {
		return nil, err
	}
	return t.observer, nil
}

// observer returns an Observer that records each event, then passes it to
// next (which may be nil).
func (t *recorder) observer(next harness.Observer) harness.Observer {
	return func(e harness.Event) {
		t.record(e)
		if next != nil {
			next(e)
		}
	}
}

func (t *recorder) record(e harness.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	at := e.Time
	if at.IsZero() {
		at = time.Now()
	}
	key := turnKey{e.Conversation, e.Turn}
	switch e.Kind {
	case harness.EventTurnStart:
		t.startTurn(key, at)
	case harness.EventRequest:
		t.startChat(t.turn(key, at), e, at)
	case harness.EventResponse:
		t.endChat(t.turn(key, at), e, at, nil)
	case harness.EventToolResult:
		t.toolSpan(t.turn(key, at), e, at)
	case harness.EventPolicy, harness.EventWarning:
		ts := t.turn(key, at)
		attrs := []attribute.KeyValue{attribute.String("harness.policy", e.Policy), attribute.String("harness.detail", e.Detail)}
		if e.Round > 0 {
			attrs = append(attrs, attrRound.Int(e.Round))
		}
		ts.span.AddEvent("harness."+string(e.Kind), trace.WithTimestamp(at), trace.WithAttributes(attrs...))
	case harness.EventTurnEnd:
		t.endTurn(key, e, at)
	}
}

func (t *recorder) startTurn(key turnKey, at time.Time) *turnSpans {
	ctx, span := t.tracer.Start(context.Background(), "invoke_agent "+t.opts.AgentName,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(at),
		trace.WithAttributes(semconv.GenAIOperationNameInvokeAgent, semconv.GenAIAgentNameKey.String(t.opts.AgentName),
			semconv.GenAIConversationIDKey.String(key.conv), attrTurn.Int(key.turn)))
	ts := &turnSpans{ctx: ctx, span: span, chats: map[int]chatSpan{}}
	t.turns[key] = ts
	return ts
}

// turn returns the turn's spans, starting them for an event whose turn
// start was not seen (an observer attached mid-turn).
func (t *recorder) turn(key turnKey, at time.Time) *turnSpans {
	if ts := t.turns[key]; ts != nil {
		return ts
	}
	return t.startTurn(key, at)
}

func (t *recorder) endTurn(key turnKey, e harness.Event, at time.Time) {
	ts := t.turn(key, at)
	failed := e.Outcome == harness.Error || e.Outcome == harness.Cancelled
	for round := range ts.chats {
		// A call the model never answered ends with the turn.
		t.endChat(ts, harness.Event{Round: round}, at, &e)
	}
	ts.span.SetAttributes(attrOutcome.String(string(e.Outcome)))
	if e.Usage != nil {
		ts.span.SetAttributes(usageAttrs(*e.Usage)...)
	}
	if failed {
		ts.span.SetStatus(codes.Error, e.Detail)
		ts.span.SetAttributes(semconv.ErrorTypeKey.String(string(e.Outcome)))
	}
	ts.span.End(trace.WithTimestamp(at))
	delete(t.turns, key)
}

func (t *recorder) startChat(ts *turnSpans, e harness.Event, at time.Time) {
	if old, ok := ts.chats[e.Round]; ok {
		// The request was rebuilt (the context was too large) and sent again.
		old.span.End(trace.WithTimestamp(at))
	}
	attrs := []attribute.KeyValue{semconv.GenAIOperationNameChat, semconv.GenAIRequestModelKey.String(t.opts.Model), attrRound.Int(e.Round)}
	if t.opts.Provider != "" {
		attrs = append(attrs, semconv.GenAIProviderNameKey.String(t.opts.Provider))
	}
	if e.Stats != nil {
		attrs = append(attrs, attrEvidence.Int(e.Stats.EvidenceChars), attrToolsSent.Int(e.Stats.Tools), attrToolBytes.Int(e.Stats.ToolBytes))
	}
	_, span := t.tracer.Start(ts.ctx, spanName("chat", t.opts.Model), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(at), trace.WithAttributes(attrs...))
	ts.chats[e.Round] = chatSpan{span: span, start: at}
}

// endChat ends a round's chat span with its usage and records the
// metrics; end, when set, is the turn end that cut the call short.
func (t *recorder) endChat(ts *turnSpans, e harness.Event, at time.Time, end *harness.Event) {
	c, ok := ts.chats[e.Round]
	if !ok {
		return
	}
	delete(ts.chats, e.Round)
	ctx := context.Background()
	common := []attribute.KeyValue{semconv.GenAIRequestModelKey.String(t.opts.Model)}
	if end != nil {
		c.span.SetStatus(codes.Error, end.Detail)
		c.span.SetAttributes(semconv.ErrorTypeKey.String(string(end.Outcome)))
		common = append(common, semconv.ErrorTypeKey.String(string(end.Outcome)))
	}
	if e.Usage != nil {
		c.span.SetAttributes(usageAttrs(*e.Usage)...)
		t.tokens.Record(ctx, int64(e.Usage.Input), genaiconv.OperationNameChat, t.provider(), genaiconv.TokenTypeInput, common...)
		t.tokens.Record(ctx, int64(e.Usage.Output), genaiconv.OperationNameChat, t.provider(), genaiconv.TokenTypeOutput, common...)
	}
	t.duration.Record(ctx, at.Sub(c.start).Seconds(), genaiconv.OperationNameChat, t.provider(), common...)
	c.span.End(trace.WithTimestamp(at))
}

// toolSpan records a finished call: its span starts Duration before the
// event that reports it.
func (t *recorder) toolSpan(ts *turnSpans, e harness.Event, at time.Time) {
	if e.Call == nil {
		return
	}
	attrs := []attribute.KeyValue{semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolNameKey.String(e.Call.Name),
		semconv.GenAIToolCallIDKey.String(e.Call.ID), attrRound.Int(e.Round)}
	var dur time.Duration
	r := e.Result
	if r != nil {
		dur = r.Duration
		attrs = append(attrs, attrBytesIn.Int(r.BytesIn), attrBytesShown.Int(r.BytesShown), attrCuts.Int(len(r.Cuts)))
		if r.TimedOut {
			attrs = append(attrs, attrTimedOut.Bool(true))
		}
		if n := len(r.Cuts); n > 0 {
			last := r.Cuts[n-1]
			attrs = append(attrs, attrCutKind.String(string(last.Kind)), attrCutBy.String(last.By))
			if last.Locator != "" {
				attrs = append(attrs, attrCutLocator.String(last.Locator))
			}
		}
	}
	_, span := t.tracer.Start(ts.ctx, spanName("execute_tool", e.Call.Name), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(at.Add(-dur)), trace.WithAttributes(attrs...))
	common := []attribute.KeyValue{semconv.GenAIToolNameKey.String(e.Call.Name)}
	if r != nil && r.IsError {
		errType := "tool_error"
		if r.TimedOut {
			errType = "timeout"
		}
		span.SetStatus(codes.Error, errType)
		span.SetAttributes(semconv.ErrorTypeKey.String(errType))
		common = append(common, semconv.ErrorTypeKey.String(errType))
	}
	t.duration.Record(context.Background(), dur.Seconds(), genaiconv.OperationNameExecuteTool, t.provider(), common...)
	span.End(trace.WithTimestamp(at))
}

func (t *recorder) provider() genaiconv.ProviderNameAttr {
	return genaiconv.ProviderNameAttr(t.opts.Provider)
}

// usageAttrs are the GenAI usage attributes: input counts every prompt
// token, cached ones included (harness.Usage's convention and the
// semantic conventions' both).
func usageAttrs(u harness.Usage) []attribute.KeyValue {
	return []attribute.KeyValue{
		semconv.GenAIUsageInputTokensKey.Int(u.Input),
		semconv.GenAIUsageCacheReadInputTokensKey.Int(u.Cached),
		semconv.GenAIUsageCacheCreationInputTokensKey.Int(u.CacheWrite),
		semconv.GenAIUsageOutputTokensKey.Int(u.Output),
	}
}

// spanName is "{operation} {target}", or the operation alone when the
// target is unknown.
func spanName(op, target string) string {
	if target == "" {
		return op
	}
	return op + " " + target
}
