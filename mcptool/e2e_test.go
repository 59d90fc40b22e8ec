package mcptool

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/internal/mcptest"
)

// The end-to-end tests run the real reference servers (internal/mcptest).

func everything(t *testing.T) ServerConfig {
	return ServerConfig{Name: "everything", Type: typeStdio, Command: "node", Args: []string{mcptest.Server(t, "server-everything"), "stdio"}}
}

func TestE2EEverythingListAndCall(t *testing.T) {
	_, tools := openTest(t, nil, everything(t))
	for _, name := range []string{"echo", "get-sum", "get-tiny-image", "get-structured-content", "trigger-long-running-operation"} {
		if _, ok := tools[name]; !ok {
			t.Fatalf("no %s among %d tools", name, len(tools))
		}
	}
	if r := tools["echo"].Spec.Risk; r != harness.ReadOnly {
		t.Errorf("echo risk %v", r)
	}
	if r := tools["gzip-file-as-resource"].Spec.Risk; r != harness.Idempotent|harness.Network {
		t.Errorf("gzip-file-as-resource risk %v (openWorldHint)", r)
	}
	if res := call(t, tools, "echo", `{"message":"hello from harness"}`); res.IsError || !strings.Contains(res.FullText(), "hello from harness") {
		t.Fatalf("echo: %+v", res)
	}
	if res := call(t, tools, "get-sum", `{"a":2,"b":40}`); !strings.Contains(res.FullText(), "42") {
		t.Fatalf("get-sum: %q", res.FullText())
	}
	// Structured content sent also as its JSON text counts once.
	res := call(t, tools, "get-structured-content", `{"location":"New York"}`)
	if len(res.Structured) == 0 || res.PayloadSize() != len(res.Parts[0].Text) {
		t.Errorf("structured: payload %d, text %d, structured %s", res.PayloadSize(), len(res.Parts[0].Text), res.Structured)
	}
	// Resource links are text lines; an embedded text blob is text.
	res = call(t, tools, "get-resource-links", `{"count":2}`)
	if len(res.Parts) != 3 || !strings.HasPrefix(res.Parts[1].Text, "[resource link] demo://") {
		t.Errorf("links: %q", res.FullText())
	}
	res = call(t, tools, "get-resource-reference", `{"resourceType":"Text","resourceId":1}`)
	if !strings.Contains(res.FullText(), "Resource 1") {
		t.Errorf("embedded: %q", res.FullText())
	}
}

func TestE2EImageContent(t *testing.T) {
	_, tools := openTest(t, nil, everything(t))
	res := call(t, tools, "get-tiny-image", `{}`)
	var img *harness.Part
	for i := range res.Parts {
		if res.Parts[i].Type == harness.PartImage {
			img = &res.Parts[i]
		}
	}
	if img == nil || img.MIMEType != "image/png" || !strings.HasPrefix(string(img.Data), "\x89PNG") {
		t.Fatalf("no PNG image part: %+v", res.Parts)
	}
}

// TestE2ELargeEchoCappedAndSpilled sends 1 MB through the echo tool of the
// reference server and the agent's ceiling: the model sees at most the
// ceiling, the spill file holds the whole echo.
func TestE2ELargeEchoCappedAndSpilled(t *testing.T) {
	_, tools := openTest(t, nil, everything(t))
	const ceiling = 8 << 10
	msg := bigText(1 << 20)
	ws := t.TempDir()
	policy := &guard.ResultPolicy{MaxBytes: ceiling}
	args := fmt.Sprintf(`{"message":%q}`, msg)
	res, shown := turnResult(t, map[string]harness.Tool{"echo": tools["echo"]}, "echo", args, []harness.Guard{policy.Guard()}, ws)
	if res.IsError || res.Bytes < len(msg) {
		t.Fatalf("stored %d bytes, error %v", res.Bytes, res.IsError)
	}
	if got := messageBytes(shown); got > ceiling {
		t.Fatalf("model shown %d bytes > %d", got, ceiling)
	}
	if len(res.Cuts) != 1 || res.Cuts[0].Kind != harness.CutSpilled {
		t.Fatalf("cuts %+v", res.Cuts)
	}
	spilled, err := os.ReadFile(filepath.Join(ws, res.Cuts[0].Locator))
	if err != nil || !strings.Contains(string(spilled), msg) {
		t.Fatalf("spill file lacks the echo (%v, %d bytes)", err, len(spilled))
	}
}

func TestE2EFilesystemAccessDenied(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("line one\nline two\nthe end of the notes file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fs := ServerConfig{Name: "fs", Type: typeStdio, Command: "node", Args: []string{mcptest.Server(t, "server-filesystem"), root}}
	_, tools := openTest(t, nil, fs)
	if r := tools["read_text_file"].Spec.Risk; r != harness.ReadOnly {
		t.Errorf("read_text_file risk %v", r)
	}
	if r := tools["write_file"].Spec.Risk; r != harness.Destructive|harness.Idempotent {
		t.Errorf("write_file risk %v", r)
	}
	res := call(t, tools, "read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(root, "notes.txt")))
	if res.IsError || res.FullText() != "line one\nline two\nthe end of the notes file\n" {
		t.Fatalf("read: %+v", res)
	}
	// {"content": <the text>} beside the text is not sent twice.
	if res.PayloadSize() != len(res.Parts[0].Text) || len(res.Structured) != 0 {
		t.Errorf("payload %d for %d bytes of text (structured %s)", res.PayloadSize(), len(res.Parts[0].Text), res.Structured)
	}
	res = call(t, tools, "read_text_file", `{"path":"/etc/passwd"}`)
	if !res.IsError || !strings.Contains(res.FullText(), "Access denied") {
		t.Fatalf("outside the root: %+v", res)
	}
}

func TestE2EServerKilledMidCall(t *testing.T) {
	set, tools := openTest(t, nil, everything(t))
	srv := set.serverNamed("everything")
	pid := srv.PID()
	// Kill once the server has read the request, however long that takes:
	// its stdin was quiet since the tool list.
	base := readChars(t, pid)
	go func() {
		for deadline := time.Now().Add(hangBound); readChars(t, pid) == base && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}()
	res := call(t, tools, "trigger-long-running-operation", `{"duration":600,"steps":4}`)
	if !res.IsError || !strings.Contains(res.FullText(), `"everything" stopped during the call`) {
		t.Fatalf("%+v", res.FullText())
	}
	if res := call(t, tools, "echo", `{"message":"restarted"}`); res.IsError || !strings.Contains(res.FullText(), "restarted") {
		t.Fatalf("after the kill: %+v", res)
	}
	if srv.Restarts() != 1 || srv.PID() == pid {
		t.Errorf("restarts %d, pid %d (was %d)", srv.Restarts(), srv.PID(), pid)
	}
}

// readChars returns how many bytes process pid has read so far (rchar in
// /proc/PID/io), or -1 once it is gone.
func readChars(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return -1
}

// TestE2EStreamableHTTP runs the reference server in its streamable HTTP
// mode.
func TestE2EStreamableHTTP(t *testing.T) {
	entry := mcptest.Server(t, "server-everything")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("node", entry, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(hangBound)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the HTTP server did not listen on %s", addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, tools := openTest(t, nil, ServerConfig{Name: "remote", Type: typeHTTP, URL: "http://" + addr + "/mcp"})
	if res := call(t, tools, "get-sum", `{"a":1,"b":2}`); !strings.Contains(res.FullText(), "3") {
		t.Fatalf("%+v", res)
	}
}
