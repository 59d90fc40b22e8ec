package benchcore

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/promptunit"
	"github.com/agentharness/harness/proxy"
	"github.com/agentharness/harness/replay"
)

// throughFront starts the recording upstream's listener and, in front of
// it, the proxy mk builds for the upstream's URL; it returns the Through
// the bench uses.
func throughFront(t *testing.T, mk func(upstream string) http.Handler) *Through {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(mk("http://" + ln.Addr().String()))
	t.Cleanup(front.Close)
	return &Through{URL: front.URL + "/v1", Listener: ln}
}

// suiteRecs returns the named recordings of the built-in suite.
func suiteRecs(t *testing.T, ids ...string) []*replay.Recording {
	t.Helper()
	all, err := Suite()
	if err != nil {
		t.Fatal(err)
	}
	var out []*replay.Recording
	for _, r := range all {
		for _, id := range ids {
			if r.ID == id {
				out = append(out, r)
			}
		}
	}
	if len(out) != len(ids) {
		t.Fatalf("suite: found %d of %v", len(out), ids)
	}
	return out
}

// breaksCaused counts the calls of through whose cached prefix does not
// cover the whole previous request while none's does.
func breaksCaused(none, through *replay.Report) int {
	broke := func(cs []replay.CallStat, i int) bool {
		return i > 0 && cs[i].Cached < cs[i-1].Input-promptunit.RequestOverhead
	}
	n := 0
	for i := range through.Calls {
		if broke(through.Calls, i) && !broke(none.Calls, i) {
			n++
		}
	}
	return n
}

func TestThroughHarnessProxy(t *testing.T) {
	th := throughFront(t, func(upstream string) http.Handler {
		p, err := proxy.New(&proxy.Options{Upstream: upstream, Workspace: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		return p
	})
	recs := suiteRecs(t, "lockfile", "build-log-tail", "stuck-loop")
	none, _ := Lookup("none")
	tab, reports, err := RunReports(context.Background(), Options{Presets: []Preset{none}, Through: th}, recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 2 || !strings.HasPrefix(tab.Rows[1].Preset, "through:127.0.0.1:") {
		t.Fatalf("rows: %+v", tab.Rows)
	}
	n, p := tab.Rows[0], tab.Rows[1]
	if p.Calls != n.Calls || p.Output != n.Output {
		t.Errorf("through replayed %d calls (%d output tokens), none %d (%d)", p.Calls, p.Output, n.Calls, n.Output)
	}
	for r, rec := range recs {
		cells := tab.Runs[r].Cells
		if w := Weigh(rec); w.OutputHeavy && cells[1].Input >= cells[0].Input {
			t.Errorf("%s (output-heavy): through the proxy %d input tokens, none %d", rec.ID, cells[1].Input, cells[0].Input)
		}
		if b := breaksCaused(reports[r][0], reports[r][1]); b != 0 {
			t.Errorf("%s: the proxy caused %d cache breaks", rec.ID, b)
		}
	}
	if !tab.Runs[0].OutputHeavy {
		t.Errorf("lockfile is not output-heavy: %+v", tab.Runs[0].OutputWeight)
	}
	t.Logf("none %d input (%d cached), through %d input (%d cached), ratio %.3f", n.Input, n.Cached, p.Input, p.Cached, p.Ratio)
}

func TestThroughPassThroughEqualsNone(t *testing.T) {
	th := throughFront(t, func(upstream string) http.Handler {
		u, err := url.Parse(upstream)
		if err != nil {
			t.Fatal(err)
		}
		return httputil.NewSingleHostReverseProxy(u)
	})
	all, err := Suite()
	if err != nil {
		t.Fatal(err)
	}
	none, _ := Lookup("none")
	tab, err := Run(context.Background(), all, &Options{Presets: []Preset{none}, Through: th})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tab.Rows[1].Figures, tab.Rows[0].Figures; !reflect.DeepEqual(got, want) {
		t.Errorf("through a pass-through:\n got %+v\nwant %+v", got, want)
	}
	for _, run := range tab.Runs {
		if !reflect.DeepEqual(run.Cells[1], run.Cells[0]) {
			t.Errorf("%s: through %+v, none %+v", run.Recording, run.Cells[1], run.Cells[0])
		}
	}
}

func TestThroughErrors(t *testing.T) {
	recs := suiteRecs(t, "stuck-loop")
	none, _ := Lookup("none")
	tests := []struct {
		name string
		mk   func(upstream string) http.Handler
		want string
	}{
		{"proxy refuses", func(string) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", http.StatusBadGateway) })
		}, "502"},
		{"proxy answers itself", func(string) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("{}")) })
		}, "without sending a request upstream"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := throughFront(t, tt.mk)
			_, err := Run(context.Background(), recs, &Options{Presets: []Preset{none}, Through: th})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := Run(context.Background(), recs, &Options{Through: &Through{URL: "http://127.0.0.1:1/v1"}}); err == nil {
		t.Error("no listener: no error")
	}
}
