package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// collector is a loopback OTLP/HTTP receiver: it records each export's
// path and protobuf body.
type collector struct {
	*httptest.Server
	mu     sync.Mutex
	bodies map[string][]byte
}

func newCollector(t *testing.T) *collector {
	c := &collector{bodies: map[string][]byte{}}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.bodies[r.URL.Path] = append(c.bodies[r.URL.Path], b...)
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *collector) got(path string) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bodies[path]
}

// The standard OTEL_* variables turn export on: a run sends its spans and
// metrics to the collector before it exits. Without them nothing is sent.
func TestRunExportsTelemetryWhenAsked(t *testing.T) {
	c := newCollector(t)
	script := writeScript(t, `{"steps":[
		{"tool_calls":[{"id":"call_ls","name":"list_dir","args":{"path":"."}}]},
		{"text":"done"}]}`)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", c.URL)
	t.Setenv("OTEL_SERVICE_NAME", "harness-test")
	_, stderr, code := inproc(t, "run", "--model", "scripted:"+script, "--workspace", t.TempDir(), "--no-store", "look")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	traces := c.got("/v1/traces")
	for _, want := range []string{"invoke_agent harness", "chat " + strings.TrimPrefix("scripted:"+script, "scripted:"), "execute_tool list_dir", "gen_ai.tool.call.id", "call_ls", "gen_ai.usage.input_tokens", "harness-test"} {
		if !bytes.Contains(traces, []byte(want)) {
			t.Errorf("the exported spans lack %q", want)
		}
	}
	metrics := c.got("/v1/metrics")
	for _, want := range []string{"gen_ai.client.token.usage", "gen_ai.client.operation.duration"} {
		if !bytes.Contains(metrics, []byte(want)) {
			t.Errorf("the exported metrics lack %q", want)
		}
	}
}

func TestTelemetryIsOffByDefault(t *testing.T) {
	for _, tc := range []struct {
		env     map[string]string
		on, err bool
	}{
		{map[string]string{}, false, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}, false, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"}, false, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false, true},
	} {
		e := &env{getenv: func(k string) string { return tc.env[k] }}
		on, err := signalOn(e, "TRACES")
		if on != tc.on || (err != nil) != tc.err {
			t.Errorf("%v: on %v, err %v", tc.env, on, err)
		}
	}
	e := &env{getenv: func(k string) string {
		return map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}[k]
	}}
	if _, _, err := telemetryFromEnv(t.Context(), e, "openai", "m"); err == nil || !strings.Contains(err.Error(), "http/protobuf") {
		t.Errorf("grpc protocol: %v", err)
	}
}
