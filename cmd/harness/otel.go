package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/telemetry"
)

// telemetryShutdownTimeout bounds the flush of the last spans and metrics
// when a run ends; an unreachable collector must not hold the exit.
const telemetryShutdownTimeout = 5 * time.Second

// telemetryFromEnv builds OpenTelemetry export from the standard OTEL_*
// variables. It is off unless an OTLP endpoint is set
// (OTEL_EXPORTER_OTLP_ENDPOINT, or the _TRACES_/_METRICS_ one) or
// OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER say "otlp"; "none" or
// OTEL_SDK_DISABLED=true turn a signal off. Export is OTLP over HTTP
// (protobuf); the exporters read the rest of their OTEL_EXPORTER_OTLP_*
// settings (headers, timeout, TLS) and the resource OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES themselves. It returns the observer wrapper
// and a shutdown that flushes what is left.
func telemetryFromEnv(ctx context.Context, e *env, provider, model string) (func(harness.Observer) harness.Observer, func(), error) {
	identity := func(o harness.Observer) harness.Observer { return o }
	traces, err := signalOn(e, "TRACES")
	if err != nil {
		return nil, nil, err
	}
	metrics, err := signalOn(e, "METRICS")
	if err != nil {
		return nil, nil, err
	}
	if !traces && !metrics {
		return identity, func() {}, nil
	}
	if p := e.getenv("OTEL_EXPORTER_OTLP_PROTOCOL"); p != "" && p != "http/protobuf" {
		return nil, nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: harness exports OTLP over HTTP only (http/protobuf)", p)
	}
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", "harness")),
		resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil {
		return nil, nil, fmt.Errorf("telemetry resource: %w", err)
	}
	opts := &telemetry.Options{Provider: provider, Model: model}
	var stops []func(context.Context) error
	if traces {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("OTLP trace exporter: %w", err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		opts.TracerProvider, stops = tp, append(stops, tp.Shutdown)
	}
	if metrics {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("OTLP metric exporter: %w", err)
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
		opts.MeterProvider, stops = mp, append(stops, mp.Shutdown)
	}
	tel, err := telemetry.New(opts)
	if err != nil {
		return nil, nil, err
	}
	shutdown := func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), telemetryShutdownTimeout)
		defer cancel()
		var errs []error
		for _, stop := range stops {
			errs = append(errs, stop(sctx))
		}
		if err := errors.Join(errs...); err != nil {
			fmt.Fprintf(e.stderr, "warning: exporting telemetry: %v\n", err)
		}
	}
	return tel, shutdown, nil
}

// signalOn reads whether one signal (TRACES, METRICS) is exported.
func signalOn(e *env, signal string) (bool, error) {
	if strings.EqualFold(e.getenv("OTEL_SDK_DISABLED"), "true") {
		return false, nil
	}
	switch exp := e.getenv("OTEL_" + signal + "_EXPORTER"); exp {
	case "none":
		return false, nil
	case "otlp":
		return true, nil
	case "":
		return e.getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || e.getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") != "", nil
	default:
		return false, fmt.Errorf("OTEL_%s_EXPORTER=%s: harness exports otlp (or none)", signal, exp)
	}
}
