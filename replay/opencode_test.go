package replay

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store/sqlite"
)

// ocFixture is the history the real opencode 1.18.33 kept of a scripted
// session (cmd/harness's TestMakeOpencodeFixture wrote it): a shell
// output it cut, a read that failed, a small read, a compaction, the
// answer, and a second turn.
const ocFixture = "testdata/opencode/opencode.db"

// TestOpencodeFixture imports the fixture and checks each model context
// against what the script did.
func TestOpencodeFixture(t *testing.T) {
	recs, err := parseOpencode(context.Background(), ocFixture)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("%d recordings, want the session before and after its compaction", len(recs))
	}
	before, after := recs[0], recs[1]
	for i, r := range recs {
		if r.Format != formatOpencode || r.Model != "claude-sonnet-4-5" || !strings.HasSuffix(r.ID, "/part-"+string(rune('1'+i))) ||
			!strings.HasPrefix(r.Source, ocFixture+"#ses_") {
			t.Errorf("recording %d: format %q model %q id %q source %q", i, r.Format, r.Model, r.ID, r.Source)
		}
	}
	if got := ocCallList(before); !slices.Equal(got, []string{"call_seq bash", "call_missing read", "call_pkg read"}) {
		t.Errorf("before the compaction: calls %q", got)
	}
	seq := before.Turns[0].Calls[0].Results[0]
	if !strings.HasPrefix(seq.Shown, "...output truncated...") || !strings.HasSuffix(seq.Shown, "30000\n") || seq.FullText() != seq.Shown {
		t.Errorf("the cut shell output: shown %.40q…, full %d chars (its saved file is gone, so full is what was shown)", seq.Shown, len(seq.FullText()))
	}
	if missing := before.Turns[0].Calls[1].Results[0]; !missing.IsError || !strings.Contains(missing.Shown, "File not found") {
		t.Errorf("the failed read: %+v", missing)
	}
	in, ctx := after.Turns[0].Input, after.Turns[0].Context
	if !strings.HasPrefix(in, ocCompactionPrompt) || !strings.Contains(in, "SUMMARY:") ||
		len(ctx) != 1 || !ctx[0].AfterInput || !strings.HasPrefix(ctx[0].Text, "Continue if you have next steps") {
		t.Errorf("after the compaction, the first input is %q with context %+v", in, ctx)
	}
	if len(after.Turns) != 2 || after.Turns[0].Calls[0].Assistant.Text() == "" ||
		!slices.Equal(ocCallList(after), []string{"call_ls bash"}) || !strings.HasPrefix(after.Turns[1].Input, `"Second question`) {
		t.Errorf("after the compaction: %d turns, calls %q", len(after.Turns), ocCallList(after))
	}
	checkOcWarnings(t, before, "not recorded by opencode: the system prompt and the tool schemas", "part 1 of 2",
		"1 compaction summary requests left out", "1 results were cut by opencode itself")
	checkOcWarnings(t, after, "part 2 of 2")
	if w := strings.Join(after.Warnings, "\n"); strings.Contains(w, "cut by opencode") {
		t.Errorf("the cut is counted in the context after the compaction too:\n%s", w)
	}
	checkOcUsage(t, recs)
}

// checkOcUsage checks every call's usage and time against the step-finish
// parts, read with SQLite's JSON functions rather than the importer's
// decoding: input counts the cache's reads and writes too.
func checkOcUsage(t *testing.T, recs []*Recording) {
	t.Helper()
	db, err := openReadOnly(ocFixture)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT json_extract(data, '$.tokens.input') + json_extract(data, '$.tokens.cache.read') + json_extract(data, '$.tokens.cache.write'),
	json_extract(data, '$.tokens.cache.read'), json_extract(data, '$.tokens.output'), time_created
	FROM part p WHERE json_extract(data, '$.type') = 'step-finish'
	AND NOT EXISTS (SELECT 1 FROM message m WHERE m.id = p.message_id AND json_extract(m.data, '$.summary') = 1)
	ORDER BY time_created, id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var want []harness.Usage
	var times []int64
	for rows.Next() {
		var u harness.Usage
		var ms int64
		if err := rows.Scan(&u.Input, &u.Cached, &u.Output, &ms); err != nil {
			t.Fatal(err)
		}
		want, times = append(want, u), append(times, ms)
	}
	var got []harness.Usage
	var gotTimes []int64
	for _, r := range recs {
		for _, tn := range r.Turns {
			for _, c := range tn.Calls {
				if !c.HasUsage {
					t.Errorf("a call without usage")
				}
				got, gotTimes = append(got, c.Usage), append(gotTimes, c.Time.UnixMilli())
			}
		}
	}
	if !slices.Equal(got, want) || !slices.Equal(gotTimes, times) {
		t.Errorf("usage %v at %v, want %v at %v", got, gotTimes, want, times)
	}
}

func ocCallList(r *Recording) []string {
	var out []string
	for _, tn := range r.Turns {
		for _, c := range tn.Calls {
			for i, tc := range c.Assistant.ToolCalls {
				out = append(out, tc.ID+" "+tc.Name)
				if i >= len(c.Results) || c.Results[i].CallID != tc.ID || c.Results[i].Tool != tc.Name {
					out = append(out, "(unanswered)")
				}
			}
		}
	}
	return out
}

func checkOcWarnings(t *testing.T, r *Recording, want ...string) {
	t.Helper()
	all := strings.Join(r.Warnings, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("%s: no warning with %q in:\n%s", r.ID, w, all)
		}
	}
}

// TestOpencodeDetection checks that the loaders tell opencode's database
// from harness's store and from other SQLite files, and that a folder
// import passes over what opencode keeps beside its database.
func TestOpencodeDetection(t *testing.T) {
	ctx := context.Background()
	if !isOpencode(ctx, ocFixture) {
		t.Fatal("the fixture is not recognised")
	}
	if _, err := parseStore(ctx, ocFixture); !errors.Is(err, ErrNotTranscript) {
		t.Errorf("parseStore of opencode's database: %v, want ErrNotTranscript", err)
	}
	if _, err := ParseFile(ocFixture); !errors.Is(err, ErrManyConversations) {
		t.Errorf("ParseFile of a database with two contexts: %v, want ErrManyConversations", err)
	}
	storePath := filepath.Join(t.TempDir(), "harness.db")
	st, err := sqlite.Open(ctx, storePath, nil)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if isOpencode(ctx, storePath) {
		t.Error("harness's store is taken for opencode's database")
	}
	if _, err := parseOpencode(ctx, storePath); !errors.Is(err, errNotOpencode) || !errors.Is(err, ErrNotTranscript) {
		t.Errorf("parseOpencode of harness's store: %v", err)
	}

	dir := t.TempDir()
	data, err := os.ReadFile(ocFixture)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"opencode.db":                      string(data),
		"tool-output/tool_01":              "the whole output of a cut call",
		"snapshot/global/abc/objects/0a/b": "a git object",
		"log/2026-12-02.log":               "level=INFO",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	recs, skipped, err := Load(dir)
	if err != nil || len(recs) != 2 {
		t.Fatalf("Load: %d recordings, %v", len(recs), err)
	}
	if len(skipped) != 1 || !errors.Is(skipped[0].Err, ErrSavedOutput) {
		t.Errorf("skipped %+v, want only tool-output/tool_01 as a saved output", skipped)
	}
}

// ocMsg and ocPt build the rows of a made-up session.
func ocMsg(id string, created int64, data string) ocRow {
	return ocRow{ID: id, Created: created, Data: data}
}

func ocPt(msg string, created int64, data string) ocRow {
	return ocRow{ID: msg + "_" + string(rune('a'+created%26)), Message: msg, Created: created, Data: data}
}

const (
	ocUser     = `{"role":"user","time":{"created":1}}`
	ocAsst     = `{"role":"assistant","modelID":"gpt-test","time":{"created":2,"completed":3},"tokens":{"input":1,"output":2,"reasoning":0,"cache":{"read":0,"write":0}}}`
	ocStart    = `{"type":"step-start"}`
	ocFinish   = `{"type":"step-finish","tokens":{"input":10,"output":5,"reasoning":1,"cache":{"read":4,"write":2}}}`
	ocBashDone = `{"type":"tool","tool":"bash","callID":"c1","state":{"status":"completed","input":{"command":"ls"},"output":"a\nb\n"}}`
)

// TestOpencodeRows checks the mapping of what the fixture does not hold:
// several steps in one message (opencode before 1.x), interrupted and
// pruned calls, reasoning, ignored text, attachments, a failed message, a
// cut output read back, a compaction that keeps messages after its
// summary, and a subagent's session.
func TestOpencodeRows(t *testing.T) {
	type want struct {
		calls   []string
		inputs  []string
		parts   int
		warn    []string
		check   func(t *testing.T, recs []*Recording)
		errText string
		noCalls bool
	}
	for _, tc := range []struct {
		name   string
		parent string
		msgs   []ocRow
		parts  []ocRow
		want   want
	}{
		{name: "two steps in one message",
			msgs: []ocRow{ocMsg("m1", 1, ocUser), ocMsg("m2", 2, ocAsst)},
			parts: []ocRow{ocPt("m1", 1, `{"type":"text","text":"hi"}`),
				ocPt("m2", 2, ocStart), ocPt("m2", 3, ocBashDone), ocPt("m2", 4, ocFinish),
				ocPt("m2", 5, ocStart), ocPt("m2", 6, `{"type":"reasoning","text":"hmm"}`), ocPt("m2", 7, `{"type":"text","text":"done"}`), ocPt("m2", 8, ocFinish)},
			want: want{calls: []string{"c1 bash"}, inputs: []string{"hi"}, parts: 1, warn: []string{"1 reasoning parts left out"},
				check: func(t *testing.T, recs []*Recording) {
					cs := recs[0].Turns[0].Calls
					if len(cs) != 2 || cs[0].Usage != (harness.Usage{Input: 16, Cached: 4, CacheWrite: 2, Output: 5}) || cs[1].Assistant.Text() != "done" ||
						cs[0].Time.UnixMilli() != 4 || cs[1].Time.UnixMilli() != 8 {
						t.Errorf("calls %+v", cs)
					}
				}}},
		{name: "interrupted, pruned, attachments, ignored text",
			msgs: []ocRow{ocMsg("m1", 1, ocUser), ocMsg("m2", 2, ocAsst)},
			parts: []ocRow{ocPt("m1", 1, `{"type":"text","text":"look"}`), ocPt("m1", 2, `{"type":"text","text":"hidden","ignored":true}`),
				ocPt("m1", 3, `{"type":"file","mime":"image/png","url":"data:"}`), ocPt("m1", 4, `{"type":"file","mime":"text/plain"}`),
				ocPt("m2", 5, ocStart), ocPt("m2", 6, `{"type":"tool","tool":"bash","callID":"c1","state":{"status":"running","input":{}}}`),
				ocPt("m2", 7, `{"type":"tool","tool":"read","callID":"c2","state":{"status":"completed","input":{"filePath":"/x"},"output":"x","time":{"compacted":9}}}`)},
			want: want{calls: []string{"c1 bash", "c2 read"}, inputs: []string{"look"}, parts: 1,
				warn: []string{"1 results were later cleared by opencode's pruning", "1 attachments"},
				check: func(t *testing.T, recs []*Recording) {
					c := recs[0].Turns[0].Calls[0]
					if r := c.Results[0]; r.Shown != ocInterrupted || !r.IsError {
						t.Errorf("interrupted call: %+v", r)
					}
					if !c.HasUsage || c.Usage.Input != 1 || c.Time.UnixMilli() != 3 {
						t.Errorf("a single unfinished step takes the message's usage and time: %+v %v", c.Usage, c.Time)
					}
				}}},
		{name: "a cut output read back",
			msgs: []ocRow{ocMsg("m1", 1, ocUser), ocMsg("m2", 2, ocAsst)},
			parts: []ocRow{ocPt("m1", 1, `{"type":"text","text":"go"}`), ocPt("m2", 2, ocStart),
				ocPt("m2", 3, `{"type":"tool","tool":"bash","callID":"c1","state":{"status":"completed","input":{},"output":"...output truncated...\n\nFull output saved to: /saved/tool_1\n\ntail","metadata":{"truncated":true,"outputPath":"/saved/tool_1"}}}`),
				ocPt("m2", 4, `{"type":"tool","tool":"grep","callID":"c2","state":{"status":"completed","input":{},"output":"head\n... output truncated; full content saved to /saved/tool_2 ..."}}`),
				ocPt("m2", 5, ocFinish)},
			want: want{calls: []string{"c1 bash", "c2 grep"}, inputs: []string{"go"}, parts: 1,
				warn: []string{"2 results were cut by opencode itself", "read back from 1 saved files"},
				check: func(t *testing.T, recs []*Recording) {
					rs := recs[0].Turns[0].Calls[0].Results
					if rs[0].FullText() != "the whole output" || !strings.HasSuffix(rs[0].Shown, "tail") || rs[1].FullText() != rs[1].Shown {
						t.Errorf("results %+v", rs)
					}
				}}},
		{name: "a compaction keeping the last call, and a failed message",
			msgs: []ocRow{ocMsg("m1", 1, ocUser), ocMsg("m2", 2, ocAsst), ocMsg("m3", 3, ocAsst),
				ocMsg("m4", 4, `{"role":"user"}`), ocMsg("m5", 5, `{"role":"assistant","summary":true}`),
				ocMsg("m6", 6, `{"role":"user"}`), ocMsg("m7", 7, ocAsst), ocMsg("m8", 8, `{"role":"assistant","error":{"name":"APIError"}}`)},
			parts: []ocRow{ocPt("m1", 1, `{"type":"text","text":"start"}`),
				ocPt("m2", 2, ocStart), ocPt("m2", 3, `{"type":"text","text":"first"}`), ocPt("m2", 4, ocFinish),
				ocPt("m3", 5, ocStart), ocPt("m3", 6, ocBashDone), ocPt("m3", 7, ocFinish),
				ocPt("m4", 8, `{"type":"compaction","auto":true,"tail_start_id":"m3"}`),
				ocPt("m5", 9, ocStart), ocPt("m5", 10, `{"type":"text","text":"THE SUMMARY"}`), ocPt("m5", 11, ocFinish),
				ocPt("m6", 12, `{"type":"text","text":"Continue","synthetic":true}`),
				ocPt("m7", 13, ocStart), ocPt("m7", 14, `{"type":"text","text":"answer"}`), ocPt("m7", 15, ocFinish)},
			want: want{calls: []string{"c1 bash"}, inputs: []string{"start", ocCompactionPrompt}, parts: 2,
				warn: []string{"1 compaction summary requests left out", "1 assistant messages that failed"},
				check: func(t *testing.T, recs []*Recording) {
					in := recs[1].Turns[0].Input
					if ctx := recs[1].Turns[0].Context; len(ctx) != 1 || ctx[0].Text != "Continue" {
						t.Errorf("the synthetic input after the summary: context %+v", ctx)
					}
					for _, s := range []string{"THE SUMMARY", "[Assistant tool call]: bash({\"command\":\"ls\"})\n[Tool result]: a\nb\n"} {
						if !strings.Contains(in, s) {
							t.Errorf("the input after the compaction has no %q:\n%s", s, in)
						}
					}
					if strings.Contains(in, "first") || len(recs[1].Turns) != 1 || recs[1].Calls() != 1 {
						t.Errorf("after the compaction: %d turns, %d calls, input %q", len(recs[1].Turns), recs[1].Calls(), in)
					}
				}}},
		{name: "a subagent's session", parent: "ses_parent",
			msgs:  []ocRow{ocMsg("m1", 1, ocUser), ocMsg("m2", 2, ocAsst)},
			parts: []ocRow{ocPt("m1", 1, `{"type":"text","text":"task"}`), ocPt("m2", 2, ocStart), ocPt("m2", 3, `{"type":"text","text":"ok"}`)},
			want:  want{inputs: []string{"task"}, parts: 1, warn: []string{"subagent's session (opencode's task tool) of session ses_parent"}}},
		{name: "inputs only", msgs: []ocRow{ocMsg("m1", 1, ocUser)}, parts: []ocRow{ocPt("m1", 1, `{"type":"text","text":"hi"}`)},
			want: want{noCalls: true}},
		{name: "a broken part", msgs: []ocRow{ocMsg("m1", 1, ocUser)}, parts: []ocRow{ocPt("m1", 1, `{"type":`)},
			want: want{errText: "message m1: part m1_b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parts := map[string][]ocRow{}
			for _, p := range tc.parts {
				parts[p.Message] = append(parts[p.Message], p)
			}
			saved := func(p string) (string, bool) { return "the whole output", p == "/saved/tool_1" }
			recs, err := buildOpencode("db", ocSession{ID: "ses_1", Parent: tc.parent}, tc.msgs, parts, saved)
			switch {
			case tc.want.noCalls:
				if !errors.Is(err, ErrNoModelCall) {
					t.Errorf("err %v, want ErrNoModelCall", err)
				}
				return
			case tc.want.errText != "":
				if err == nil || !strings.Contains(err.Error(), tc.want.errText) {
					t.Errorf("err %v, want one naming %q", err, tc.want.errText)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			var calls, inputs []string
			for _, r := range recs {
				calls = append(calls, ocCallList(r)...)
				inputs = append(inputs, r.Turns[0].Input[:min(len(r.Turns[0].Input), len(strings.SplitN(r.Turns[0].Input, "\n", 2)[0]))])
			}
			all := &Recording{ID: "every part"}
			for _, r := range recs {
				all.Warnings = append(all.Warnings, r.Warnings...)
			}
			checkOcWarnings(t, all, tc.want.warn...)
			if len(recs) != tc.want.parts || !slices.Equal(calls, tc.want.calls) || !slices.Equal(inputs, tc.want.inputs) {
				t.Errorf("%d recordings, calls %q, first inputs %q; want %d, %q, %q", len(recs), calls, inputs, tc.want.parts, tc.want.calls, tc.want.inputs)
			}
			if tc.want.check != nil {
				tc.want.check(t, recs)
			}
		})
	}
}

// FuzzOpencodeRows builds a session from a user message and one
// assistant message whose data and parts (one per line) are the input:
// no panic, and every result answers a call of its own response.
func FuzzOpencodeRows(f *testing.F) {
	f.Add(ocAsst, strings.Join([]string{ocStart, ocBashDone, ocFinish}, "\n"))
	f.Add(`{"role":"assistant","summary":true}`, `{"type":"text","text":"s"}`)
	f.Add(`{"role":"user"}`, `{"type":"compaction","tail_start_id":"m1"}`)
	f.Add(ocAsst, `{"type":"tool","tool":"x","callID":"c","state":{"status":"error","error":"boom","input":null}}`)
	f.Add(ocAsst, `{"type":"tool","callID":"c","state":{"output":"...output truncated...\nfull output saved to: /nope"}}`)
	f.Fuzz(func(t *testing.T, msg, partLines string) {
		msgs := []ocRow{ocMsg("m1", 1, ocUser), ocMsg("m2", 2, msg)}
		parts := map[string][]ocRow{"m1": {ocPt("m1", 0, `{"type":"text","text":"q"}`)}}
		for i, l := range strings.Split(partLines, "\n") {
			parts["m2"] = append(parts["m2"], ocPt("m2", int64(i+1), l))
		}
		recs, err := buildOpencode("db", ocSession{ID: "s"}, msgs, parts, func(string) (string, bool) { return "", false })
		if err != nil {
			return
		}
		for _, r := range recs {
			for _, tn := range r.Turns {
				for _, c := range tn.Calls {
					if len(c.Results) > len(c.Assistant.ToolCalls) {
						t.Fatalf("%d results for %d calls", len(c.Results), len(c.Assistant.ToolCalls))
					}
					for i, res := range c.Results {
						if res.CallID != c.Assistant.ToolCalls[i].ID {
							t.Fatalf("result %q answers call %q", res.CallID, c.Assistant.ToolCalls[i].ID)
						}
					}
				}
			}
		}
	})
}

// TestOpencodeReadOnly checks that importing leaves the database's bytes
// as they were.
func TestOpencodeReadOnly(t *testing.T) {
	before, err := os.ReadFile(ocFixture)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseOpencode(context.Background(), ocFixture); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(ocFixture)
	if string(before) != string(after) {
		t.Error("the import changed the database")
	}
}
