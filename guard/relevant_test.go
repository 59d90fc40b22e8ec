package guard

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/agentharness/harness"
)

// relContext is the context of a call in round 2 of turn 1: the turn's
// input and the agent's message of round 1 are in the transcript.
func relContext(ws, input, previous string) context.Context {
	conv := harness.NewConversation("c")
	turn := &harness.Turn{Index: 1, Input: input}
	if previous != "" {
		turn.Rounds = []*harness.Round{{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart(previous)}}}}
	}
	conv.Turns = []*harness.Turn{turn}
	return harness.WithCallInfo(context.Background(), harness.CallInfo{Conversation: "c", Turn: 1, Round: 2, Workspace: ws, Transcript: conv,
		Spec: harness.ToolSpec{Name: "tool", Risk: harness.ReadOnly}})
}

// relGrep is the output of a recursive grep for "token" over a code base:
// every line matches the pattern, one line is what the agent looks for.
func relGrep() (string, string) {
	var b strings.Builder
	want := "server/session.go:212:\tfunc refreshToken(s *Session) { s.expiry = now().Add(expireAfter) }\n"
	for i := 1; i <= 1500; i++ {
		if i == 800 {
			b.WriteString(want)
			continue
		}
		fmt.Fprintf(&b, "pkg/mod%03d/file%02d.go:%d:\ttoken := tokens[%d] // token number %d\n", i%97, i%13, i*7%400, i, i)
	}
	return b.String(), want
}

// relBuildLog is a 150 KB build log whose error is in the middle (a
// parallel build carries on after the failing step) and whose verdict is
// its last line.
func relBuildLog(n int) (string, string) {
	var b strings.Builder
	errLine := "internal/manifest/header.go:212:9: undefined: parseManifestHeader\n"
	for i := 0; b.Len() < n; i++ {
		if i == 1800 {
			b.WriteString(errLine)
		}
		fmt.Fprintf(&b, "[%4d/4000] CC  obj/pkg%03d/unit%04d.o\n", i, i%211, i)
	}
	b.WriteString("FAILED: build step compile-internal-manifest\nninja: build stopped: subcommand failed.\n")
	return b.String(), errLine
}

// relSource is a 3,000-line Go file with one function the agent asks
// about.
func relSource() (string, string) {
	var b strings.Builder
	want := "func issueSessionToken(user string) Token { return sign(user, ttlFor(user)) }\n"
	for i := 1; i <= 3000; i++ {
		if i == 2100 {
			b.WriteString(want)
			continue
		}
		fmt.Fprintf(&b, "\tx%d := compute(%d) // step %d of the pipeline\n", i, i, i)
	}
	return b.String(), want
}

// relCheckShown asserts the promises of an excerpt: within the ceiling,
// valid UTF-8, a marker, and every line shown is text of the output, in
// order.
func relCheckShown(t *testing.T, out, text string, limit int) {
	t.Helper()
	rpCheckCopy(t, "excerpt", out, limit)
	clean := sanitized([]byte(text))
	pos := 0
	for _, l := range strings.Split(out, "\n") {
		if l == "" || strings.HasPrefix(l, "[harness:") || strings.HasPrefix(l, "[cut ") || strings.HasPrefix(l, "… (") && strings.HasSuffix(l, ")") {
			continue
		}
		i := strings.Index(clean[pos:], l)
		if i < 0 {
			t.Fatalf("shown line %q is not text of the output after byte %d", l, pos)
		}
		pos += i + len(l)
	}
}

func TestRelevantPreviewTable(t *testing.T) {
	grep, grepWant := relGrep()
	build, buildWant := relBuildLog(150_000)
	src, srcWant := relSource()
	cases := []struct {
		name, tool, args, input, previous string
		text, want                        string
		terms                             []string
	}{
		{"grep output", "shell", `{"command":"grep -rn token ."}`, "Where is the session token refreshed, and when does it expire?",
			"Searching for token handling.", grep, grepWant, []string{"session"}},
		{"build log with the error in the middle", "shell", `{"command":"make build 2>&1"}`, "The build is red. Fix it.",
			"Running the build to see which symbol is undefined.", build, buildWant, []string{"undefined"}},
		{"file read", "read_file", `{"path":"server/session.go"}`, "How does issueSessionToken choose the token's lifetime?",
			"", src, srcWant, []string{"issuesessiontoken"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := t.TempDir()
			ctx := relContext(ws, c.input, c.previous)
			p := &ResultPolicy{Preview: Relevant{}}
			res := rpCallWith(t, p.Guard(), ctx, c.tool, "call_1", c.args, harness.TextResult(c.text))
			out := rpModelText(res)
			relCheckShown(t, out, c.text, DefaultMaxBytes)
			if len(res.Cuts) != 1 || res.Cuts[0].Kind != harness.CutSpilled || res.Cuts[0].BytesOut != len(out) {
				t.Fatalf("cuts %+v", res.Cuts)
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("the line the agent looks for is not shown:\n%s", out)
			}
			// Head and tail: the first line and the last are there.
			if first := c.text[:strings.IndexByte(c.text, '\n')+1]; !strings.HasPrefix(out, first) {
				t.Errorf("no head")
			}
			last := c.text[strings.LastIndexByte(c.text[:len(c.text)-1], '\n')+1:]
			if !strings.HasSuffix(out, last) {
				t.Errorf("no tail: %q", out[len(out)-100:])
			}
			mk := marker(out)
			for _, s := range append([]string{res.Cuts[0].Locator, "Shown here: lines 1-", "some picked because", "read_file", "grep", "bytes are omitted"}, c.terms...) {
				if !strings.Contains(mk, s) {
					t.Errorf("marker lacks %q: %s", s, mk)
				}
			}
			if !strings.Contains(out, " not shown, ") {
				t.Errorf("no gap line:\n%s", out)
			}
			saved, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(res.Cuts[0].Locator)))
			if err != nil || string(saved) != c.text || res.FullText() != c.text {
				t.Errorf("full payload: %v", err)
			}
			// A head+tail preview of the same result does not show the
			// line: relevance is what finds it.
			ht := rpModelText(rpCallWith(t, (&ResultPolicy{Preview: HeadTail{}}).Guard(), relContext(t.TempDir(), c.input, c.previous), c.tool, "call_1", c.args, harness.TextResult(c.text)))
			if strings.Contains(ht, c.want) {
				t.Errorf("head+tail shows the line too: a weak case")
			}
		})
	}
}

// marker returns the guard's marker from a model copy.
func marker(text string) string {
	i := strings.Index(text, "[harness:")
	if i < 0 {
		return ""
	}
	return text[i : i+strings.Index(text[i:], "]")+1]
}

// With nothing to look for, Relevant is HeadTail{Head+Middle, Tail}:
// the same bytes as the default preview.
func TestRelevantWithoutQueryIsHeadTail(t *testing.T) {
	build, _ := relBuildLog(60_000)
	for _, c := range []struct{ name, args, input string }{
		{"no query", `{}`, ""},
		{"no line matches", `{"command":"zzzqqq"}`, "Nothing here matches xyzzy."},
	} {
		rel := rpModelText(rpCallWith(t, (&ResultPolicy{Preview: Relevant{}}).Guard(), relContext(t.TempDir(), c.input, ""), "shell", "call_1", c.args, harness.TextResult(build)))
		ht := rpModelText(rpCallWith(t, (&ResultPolicy{}).Guard(), relContext(t.TempDir(), c.input, ""), "shell", "call_1", c.args, harness.TextResult(build)))
		if rel != ht {
			t.Errorf("%s: relevant preview differs from head+tail:\n%s\n---\n%s", c.name, rel, ht)
		}
	}
}

// Without a spill the preview may use the whole ceiling: the three shares
// are scaled to it, and the marker says the rest is in the transcript.
func TestRelevantFill(t *testing.T) {
	build, want := relBuildLog(150_000)
	res := rpCallWith(t, (&ResultPolicy{Preview: Relevant{}, NoSpill: true}).Guard(), relContext(t.TempDir(), "Fix the build", "Looking for the undefined symbol."),
		"shell", "call_1", `{"command":"make"}`, harness.TextResult(build))
	out := rpModelText(res)
	relCheckShown(t, out, build, DefaultMaxBytes)
	if !strings.Contains(out, want) || len(out) < DefaultMaxBytes-1024 || !strings.Contains(marker(out), "transcript only") {
		t.Errorf("fill: %d bytes, error shown %v, marker %s", len(out), strings.Contains(out, want), marker(out))
	}
	if res.Cuts[0].Kind != harness.CutTruncated {
		t.Errorf("cut %+v", res.Cuts[0])
	}
}

// A page of a spill file is not spilled again; a relevant excerpt of it
// still says how to read a smaller range.
func TestRelevantPageOfSpill(t *testing.T) {
	src, want := relSource()
	in := harness.TextResult(src)
	in.Meta = map[string]any{"path": ".harness/spill/c/call_0-read_file.txt"}
	out := rpModelText(rpCallWith(t, (&ResultPolicy{Preview: Relevant{}}).Guard(), relContext(t.TempDir(), "What does issueSessionToken return?", ""),
		"read_file", "call_1", `{"path":".harness/spill/c/call_0-read_file.txt"}`, in))
	relCheckShown(t, out, src, DefaultMaxBytes)
	if !strings.Contains(out, want) || !strings.Contains(marker(out), "Read a smaller range") {
		t.Errorf("page: %s", marker(out))
	}
}

func TestRelevantStreams(t *testing.T) {
	t.Run("a stream within maxExcerptBytes gets an excerpt", func(t *testing.T) {
		ws := t.TempDir()
		build, want := relBuildLog(300_000)
		in, _ := rpStreamResult(build)
		res := rpCallWith(t, (&ResultPolicy{Preview: Relevant{}}).Guard(), relContext(ws, "Fix the build", "Which symbol is undefined?"), "shell", "call_1", `{"command":"make"}`, in)
		out := rpModelText(res)
		relCheckShown(t, out, build, DefaultMaxBytes)
		if !strings.Contains(out, want) || res.Cuts[0].Kind != harness.CutSpilled {
			t.Fatalf("stream excerpt: %s", marker(out))
		}
		saved, _ := os.ReadFile(filepath.Join(ws, filepath.FromSlash(res.Cuts[0].Locator)))
		if string(saved) != build {
			t.Error("spill file differs")
		}
	})
	t.Run("a longer stream falls back to head and tail with bounded memory", func(t *testing.T) {
		if testing.Short() {
			t.Skip("streams 24 MiB")
		}
		ws := t.TempDir()
		const size = 24 << 20
		in := &harness.ToolResult{Stream: io.NopCloser(io.LimitReader(newRPLogStream(size), size))}
		var res *harness.ToolResult
		peak, base := rpPeakHeap(func() {
			res = rpCallWith(t, (&ResultPolicy{Preview: Relevant{}}).Guard(), relContext(ws, "Did step 777777 compile?", ""), "shell", "call_1", `{"command":"make"}`, in)
		})
		out := rpModelText(res)
		rpCheckCopy(t, "long stream", out, DefaultMaxBytes)
		if !strings.Contains(marker(out), "Shown here: the start up to line") || res.Meta["stream_bytes"] != int64(size) {
			t.Errorf("long stream: %s (%v bytes)", marker(out), res.Meta["stream_bytes"])
		}
		// The whole text is kept up to maxExcerptBytes, then dropped.
		if grew := int64(peak) - int64(base); grew > 2*maxExcerptBytes+4<<20 {
			t.Errorf("peak heap grew by %d bytes for a %d-byte stream", grew, size)
		}
		t.Logf("peak heap growth %d bytes streaming %d bytes", int64(peak)-int64(base), size)
	})
}

// TestRelevanceQuery checks where the terms come from and their weights.
func TestRelevanceQuery(t *testing.T) {
	ctx := relContext("", "Which version of zod is locked?", "Reading the lock file for the zod_version entry.")
	q := relevanceQuery(ctx, &harness.ToolCall{Args: []byte(`{"path":"package-lock.json","opts":{"n":[3,"zod"]}}`)})
	want := map[string]float64{"package": 3, "lock": 3, "json": 3, "zod": 3, "reading": 2, "entry": 2, "zod_version": 2, "version": 2, "locked": 1}
	for w, v := range want {
		if q[w] != v {
			t.Errorf("%s: weight %v, want %v", w, q[w], v)
		}
	}
	for _, stop := range []string{"the", "for", "file", "of", "is"} {
		if _, ok := q[stop]; ok {
			t.Errorf("stop word or short word %q in the query", stop)
		}
	}
	// Arguments that are not JSON still count, as text.
	if q := relevanceQuery(context.Background(), &harness.ToolCall{Args: []byte(`grep needle_here`)}); q["needle_here"] != 3 || q["needle"] != 3 {
		t.Errorf("raw args: %v", q)
	}
	// Inside an agent, the message that made the call is the agent's
	// reasoning now; the round before no longer speaks for it.
	info, _ := harness.CallInfoFrom(ctx)
	info.Message = &harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("Now the integrity_hash of zod.")}}
	q = relevanceQuery(harness.WithCallInfo(ctx, info), &harness.ToolCall{Args: []byte(`{"path":"package-lock.json"}`)})
	if q["integrity_hash"] != 2 || q["zod"] != 2 || q["locked"] != 1 {
		t.Errorf("calling message: %v", q)
	}
	if _, ok := q["entry"]; ok {
		t.Errorf("the previous round's message still counts when the calling message is known: %v", q)
	}
}

// One guard, many calls at once: Relevant keeps no state.
func TestRelevantConcurrent(t *testing.T) {
	g := (&ResultPolicy{Preview: Relevant{}}).Guard()
	ws := t.TempDir()
	src, want := relSource()
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for i := range 8 {
		wg.Go(func() {
			res := rpCallWith(t, g, relContext(ws, "What does issueSessionToken do?", ""), "read_file", fmt.Sprintf("call_%d", i), `{"path":"s.go"}`, harness.TextResult(src))
			if out := rpModelText(res); !strings.Contains(out, want) || len(out) > DefaultMaxBytes || !utf8.ValidString(out) {
				errs <- res.CallID
			}
		})
	}
	wg.Wait()
	close(errs)
	for id := range errs {
		t.Errorf("call %s: bad copy", id)
	}
}
