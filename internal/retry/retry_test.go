package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"testing"
	"time"
)

var errTransient = errors.New("transient")

func classifyTest(err error) Verdict {
	var ra retryAfterErr
	if errors.As(err, &ra) {
		return Verdict{Retry: true, After: ra.d, HasAfter: true}
	}
	return Verdict{Retry: errors.Is(err, errTransient)}
}

type retryAfterErr struct{ d time.Duration }

func (e retryAfterErr) Error() string { return fmt.Sprintf("retry after %s", e.d) }

func tiny() Policy {
	return Policy{BaseDelay: time.Microsecond, MaxDelay: 10 * time.Microsecond}
}

func TestDoRetriesTransientThenSucceeds(t *testing.T) {
	calls := 0
	var seen []Attempt
	p := tiny()
	p.OnRetry = func(a Attempt) { seen = append(seen, a) }
	err := Do(context.Background(), p, classifyTest, func(ctx context.Context, attempt int) error {
		if attempt != calls {
			t.Errorf("attempt = %d, want %d", attempt, calls)
		}
		calls++
		if calls < 3 {
			return errTransient
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	if calls != 3 || len(seen) != 2 {
		t.Fatalf("calls = %d, retries reported = %d; want 3 and 2", calls, len(seen))
	}
	for i, a := range seen {
		if a.Retry != i+1 || a.Max != DefaultMaxRetries || a.FromServer || !errors.Is(a.Err, errTransient) {
			t.Errorf("attempt %d = %+v", i, a)
		}
	}
}

func TestDoFinalErrorNotRetried(t *testing.T) {
	final := errors.New("400 bad request")
	calls := 0
	err := Do(context.Background(), tiny(), classifyTest, func(context.Context, int) error { calls++; return final })
	if calls != 1 || err != final {
		t.Fatalf("calls = %d, err = %v; want 1 call and the error itself", calls, err)
	}
}

func TestDoGivesUp(t *testing.T) {
	for _, tc := range []struct {
		max, calls int
	}{{-1, 1}, {1, 2}, {3, 4}, {0, DefaultMaxRetries + 1}} {
		calls := 0
		p := tiny()
		p.MaxRetries = tc.max
		err := Do(context.Background(), p, classifyTest, func(context.Context, int) error { calls++; return errTransient })
		if calls != tc.calls || !errors.Is(err, errTransient) {
			t.Errorf("MaxRetries %d: calls = %d, err = %v; want %d calls wrapping the error", tc.max, calls, err, tc.calls)
		}
	}
}

func TestDoHonoursRetryAfter(t *testing.T) {
	var delays []time.Duration
	p := tiny()
	p.OnRetry = func(a Attempt) {
		if !a.FromServer {
			t.Errorf("FromServer not set")
		}
		delays = append(delays, a.Delay)
	}
	calls := 0
	start := time.Now()
	err := Do(context.Background(), p, classifyTest, func(context.Context, int) error {
		calls++
		if calls == 1 {
			return retryAfterErr{30 * time.Millisecond}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(delays) != 1 || delays[0] != 30*time.Millisecond {
		t.Fatalf("delays = %v, want [30ms]", delays)
	}
	if el := time.Since(start); el < 30*time.Millisecond {
		t.Fatalf("returned after %s, before the 30ms the server asked for", el)
	}
}

func TestDoRetryAfterTooLong(t *testing.T) {
	p := tiny()
	p.MaxRetryAfter = time.Second
	calls := 0
	err := Do(context.Background(), p, classifyTest, func(context.Context, int) error {
		calls++
		return retryAfterErr{time.Hour}
	})
	if calls != 1 || !errors.Is(err, ErrRetryAfterTooLong) {
		t.Fatalf("calls = %d, err = %v", calls, err)
	}
	var ra retryAfterErr
	if !errors.As(err, &ra) {
		t.Fatalf("the server's error is lost: %v", err)
	}
}

func TestDoCancelledDuringBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := Policy{BaseDelay: time.Hour, MaxDelay: time.Hour}
	p.OnRetry = func(Attempt) { cancel() }
	// The backoff is an hour: only the cancelled context ends it before
	// the test binary's timeout.
	err := Do(ctx, p, classifyTest, func(context.Context, int) error { return errTransient })
	if !errors.Is(err, context.Canceled) || !errors.Is(err, errTransient) {
		t.Fatalf("err = %v, want context.Canceled wrapping the last failure", err)
	}
}

func TestDoCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	err := Do(ctx, tiny(), classifyTest, func(context.Context, int) error { called = true; return nil })
	if called || !errors.Is(err, context.Canceled) {
		t.Fatalf("called = %v, err = %v", called, err)
	}
}

func TestBackoff(t *testing.T) {
	for _, r := range []float64{0, 0.5, 0.999999} {
		p := Policy{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second, Rand: func() float64 { return r }}
		prevHigh := time.Duration(0)
		for n := 1; n <= 8; n++ {
			d := p.Backoff(n)
			full := min(100*time.Millisecond<<(n-1), time.Second)
			if d < full/2 || d >= full {
				t.Errorf("rand %v: Backoff(%d) = %s, want in [%s, %s)", r, n, d, full/2, full)
			}
			if full < prevHigh {
				t.Errorf("backoff shrank")
			}
			prevHigh = full
		}
	}
	// A huge retry count saturates at MaxDelay instead of overflowing.
	p := Policy{BaseDelay: time.Second, MaxDelay: 5 * time.Second, Rand: func() float64 { return 0 }}
	if d := p.Backoff(10000); d != 2500*time.Millisecond {
		t.Errorf("Backoff(10000) = %s", d)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{"none", nil, 0, false},
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second, true},
		{"fractional seconds", map[string]string{"Retry-After": "0.25"}, 250 * time.Millisecond, true},
		{"zero", map[string]string{"Retry-After": "0"}, 0, true},
		{"http-date", map[string]string{"Retry-After": "Sun, 01 Mar 2026 12:00:09 GMT"}, 9 * time.Second, true},
		{"http-date in the past", map[string]string{"Retry-After": "Sun, 01 Mar 2026 11:00:00 GMT"}, 0, true},
		{"rfc850 date", map[string]string{"Retry-After": "Sunday, 01-Mar-26 12:01:00 GMT"}, time.Minute, true},
		{"ms wins", map[string]string{"Retry-After-Ms": "1500", "Retry-After": "9"}, 1500 * time.Millisecond, true},
		{"bad ms falls back", map[string]string{"Retry-After-Ms": "soon", "Retry-After": "2"}, 2 * time.Second, true},
		{"negative", map[string]string{"Retry-After": "-3"}, 0, false},
		{"garbage", map[string]string{"Retry-After": "tomorrow"}, 0, false},
		{"huge", map[string]string{"Retry-After": "1e300"}, time.Duration(1<<63 - 1), true},
	} {
		h := http.Header{}
		for k, v := range tc.header {
			h.Set(k, v)
		}
		got, ok := RetryAfter(h, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: RetryAfter = %s, %v; want %s, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"7", "0.5", "-1", "NaN", "Inf", "1e309", "Sun, 01 Mar 2026 12:00:09 GMT", "", "x"} {
		f.Add(s, "")
		f.Add("", s)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, seconds, ms string) {
		h := http.Header{}
		h.Set("Retry-After", seconds)
		h.Set("Retry-After-Ms", ms)
		d, ok := RetryAfter(h, now)
		if d < 0 {
			t.Fatalf("negative wait %s for %q/%q", d, seconds, ms)
		}
		if !ok && d != 0 {
			t.Fatalf("wait %s without ok", d)
		}
	})
}

func TestStatus(t *testing.T) {
	for code, want := range map[int]bool{200: false, 400: false, 401: false, 404: false, 408: false, 409: false, 413: false, 429: true, 500: true, 502: true, 503: true, 529: true, 600: false} {
		if Status(code) != want {
			t.Errorf("Status(%d) = %v", code, !want)
		}
	}
}

func TestTransient(t *testing.T) {
	opErr := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("json: cannot unmarshal"), false},
		{context.Canceled, false},
		{fmt.Errorf("stream: %w", ErrIncompleteStream), true},
		{io.ErrUnexpectedEOF, true},
		{fmt.Errorf("Post: %w", io.EOF), true},
		{opErr, true},
		{fmt.Errorf("x: %w", syscall.ECONNREFUSED), true},
		{context.DeadlineExceeded, true},
		{errors.New("http2: server sent GOAWAY and closed the connection"), true},
		{&url.Error{Op: "Post", URL: "https://api.example.invalid/v1", Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: &net.DNSError{Err: "no such host", Name: "api.example.invalid", IsNotFound: true}}}, false},
		{&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "i/o timeout", Name: "api.example.com", IsTimeout: true}}, true},
		{&net.DNSError{Err: "server misbehaving", Name: "api.example.com", IsTemporary: true}, true},
	} {
		if got := Transient(tc.err); got != tc.want {
			t.Errorf("Transient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestResponse(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		status int
		header map[string]string
		want   Verdict
	}{
		{400, nil, Verdict{}},
		{400, map[string]string{"X-Should-Retry": "true"}, Verdict{Retry: true}},
		{503, map[string]string{"X-Should-Retry": "false"}, Verdict{}},
		{503, nil, Verdict{Retry: true}},
		{529, nil, Verdict{Retry: true}},
		{429, map[string]string{"Retry-After": "2"}, Verdict{Retry: true, After: 2 * time.Second, HasAfter: true}},
		{429, map[string]string{"X-Should-Retry": "TRUE", "Retry-After": "2"}, Verdict{Retry: true}},
	} {
		h := http.Header{}
		for k, v := range c.header {
			h.Set(k, v)
		}
		if got := Response(c.status, h, now); got != c.want {
			t.Errorf("%d %v: %+v, want %+v", c.status, c.header, got, c.want)
		}
	}
}
