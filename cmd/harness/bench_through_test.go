package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"
)

// freeLoopback returns a loopback address nothing listens on now.
func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestBenchThroughProxy runs "harness proxy" in front of bench's recording
// upstream and "harness bench --through" on the shipped pydicom
// trajectory (one copy made output-heavy).
func TestBenchThroughProxy(t *testing.T) {
	up := freeLoopback(t)
	stderr := &stderrLines{addr: make(chan string, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan int, 1)
	go func() {
		stopped <- runMain(ctx, []string{"proxy", "--listen", "127.0.0.1:0", "--upstream", "http://" + up, "--workspace", t.TempDir()},
			&env{stdout: &bytes.Buffer{}, stderr: stderr, getenv: func(string) string { return "" }})
	}()
	var addr string
	select {
	case addr = <-stderr.addr:
	case code := <-stopped:
		t.Fatalf("harness proxy exited with %d: %s", code, stderr.String())
	case <-time.After(5 * time.Minute): // only catches a hang
		t.Fatal("harness proxy did not start")
	}
	defer func() {
		cancel()
		if code := <-stopped; code != 0 {
			t.Errorf("harness proxy exited with %d: %s", code, stderr.String())
		}
	}()
	out, errOut, code := cli(t, "", "bench", "--json", "--presets", "none", "--through", addr+"/v1", "--through-upstream", up, heavyTrajectory(t))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "recording upstream on http://"+up) {
		t.Errorf("stderr does not name the recording upstream: %q", errOut)
	}
	var got struct {
		Presets []struct {
			Preset string `json:"preset"`
			Input  int    `json:"input_tokens"`
		} `json:"presets"`
		Runs []struct {
			Recording string `json:"recording"`
			Heavy     bool   `json:"output_heavy"`
			Cells     []struct {
				Input int `json:"input_tokens"`
			} `json:"cells"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Presets) != 2 || got.Presets[1].Preset != "through:"+strings.TrimPrefix(addr, "http://") {
		t.Fatalf("rows: %+v", got.Presets)
	}
	heavy := 0
	for _, r := range got.Runs {
		if r.Heavy {
			heavy++
			if r.Cells[1].Input >= r.Cells[0].Input {
				t.Errorf("%s: through the proxy %d input tokens, none %d", r.Recording, r.Cells[1].Input, r.Cells[0].Input)
			}
		}
	}
	if heavy == 0 {
		t.Error("no output-heavy recording")
	}
}

func TestBenchThroughFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"not a URL", []string{"--through", "127.0.0.1:8787"}, "not an http(s) URL"},
		{"remote upstream", []string{"--through", "http://127.0.0.1:8787/v1", "--through-upstream", "0.0.0.0:8399"}, "not a loopback address"},
		{"bad address", []string{"--through", "http://127.0.0.1:8787/v1", "--through-upstream", "8399"}, "--through-upstream"},
		{"with --real", []string{"--real", "--through", "http://127.0.0.1:8787/v1"}, "not --real"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := cli(t, "", append([]string{"bench"}, tt.args...)...)
			if code == 0 || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q, want %q", code, errOut, tt.want)
			}
		})
	}
}

// TestBenchThroughNothingListens: --through naming an address where no
// proxy runs fails before replaying anything, in one line that says how
// to start the proxy in front of the recording upstream.
func TestBenchThroughNothingListens(t *testing.T) {
	proxyAddr, up := freeLoopback(t), freeLoopback(t)
	stdout, stderr, code := inproc(t, "bench", "--suite", "--through", "http://"+proxyAddr+"/v1", "--through-upstream", up)
	want := "harness bench: --through http://" + proxyAddr + "/v1: nothing answers there ("
	fix := "start the proxy first, forwarding to the recording upstream: harness proxy --listen " + proxyAddr + " --upstream http://" + up + "\n"
	if code != 1 || stdout != "" || !strings.HasPrefix(stderr, want) || !strings.HasSuffix(stderr, fix) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and one line %q … %q", code, stdout, stderr, want, fix)
	}
}
