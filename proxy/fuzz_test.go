package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
)

// seedBodies are the table's request bodies, with and without results.
func seedBodies() [][]byte {
	var out [][]byte
	read := step{id: "c1", tool: "shell", args: `{"command":"cat x"}`, result: "line \"one\"\n\ttwo \\ three\u00e9"}
	for _, wc := range wireCases {
		out = append(out, wc.body("m", "hi", nil), wc.body("m", "hi", []step{read, read}))
	}
	return append(out, []byte(`{}`), []byte(`[1,2,{"a":"b\"c"}]`), []byte(`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":[{"type":"image"}]}]}]}`),
		// The cache lifetimes a request may ask for (cachelife.go).
		[]byte(`{"system":[{"type":"text","text":"x","cache_control":{"type":"ephemeral","ttl":"1h"}}],"messages":[{"role":"user","content":"hi"}]}`),
		[]byte(`{"model":"m","prompt_cache_retention":"24h","input":[{"type":"message","role":"user","content":"hi"}]}`),
		// A client's context beside the prompt (context_test.go).
		codexBody(codexMsg("user", agentsMD), codexMsg("user", "fix it"), codexMsg("user", skillText), codexCall("c1", "make"), codexOutput("c1", "ok")),
		geminiContents(`{"role":"user","parts":[{"text":"<session_context>\nx"},{"text":"why?"},{"text":"Here is the user's editor context"}]}`),
		[]byte(`{"messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>\nx</system-reminder>"},{"type":"text","text":"why?"}]}]}`))
}

// FuzzSpans: on valid JSON the scanner accepts the document, and every
// member it reports of a top-level object is a valid JSON value under the
// key encoding/json reads there; on anything it never panics or reads out
// of bounds.
func FuzzSpans(f *testing.F) {
	for _, b := range seedBodies() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		doc, err := document(b)
		valid := json.Valid(b)
		if valid && err != nil {
			t.Fatalf("valid JSON refused: %v", err)
		}
		if err != nil {
			_, _ = topFields(b)
			return
		}
		if doc.Start < 0 || doc.End > len(b) || doc.Start > doc.End {
			t.Fatalf("document span %v of %d bytes", doc, len(b))
		}
		if !valid || kind(b, doc) != '{' {
			return
		}
		fs, err := topFields(b)
		if err != nil {
			t.Fatalf("topFields: %v", err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			v := b[f.Value.Start:f.Value.End]
			if !json.Valid(v) {
				t.Fatalf("member %q: %q is not a JSON value", f.Key, v)
			}
			// The last member of a key wins in encoding/json.
			if last, _ := get(reverse(fs), f.Key); last == f.Value && !bytes.Equal(bytes.TrimSpace(m[f.Key]), v) {
				t.Fatalf("member %q: scanner %q, encoding/json %q", f.Key, v, m[f.Key])
			}
		}
	})
}

func reverse(fs []field) []field {
	out := make([]field, len(fs))
	for i, f := range fs {
		out[len(fs)-1-i] = f
	}
	return out
}

// FuzzParse: each format's parser never panics; when it reads a body,
// every result's content span lies in the body, and replacing every
// content with a JSON string leaves a body the parser reads again with
// the same results (valid JSON when the input was).
func FuzzParse(f *testing.F) {
	for _, b := range seedBodies() {
		f.Add(b)
	}
	formats := []wireFormat{anthropicFormat{}, responsesFormat{}, chatFormat{}, geminiFormat{}}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, fm := range formats {
			req, err := walkBody(b, fm, nil)
			if err != nil {
				continue
			}
			h := buildHistory(req.Items)
			for i, turn := range h.Turns {
				// A turn that holds context has an input: the user's
				// words, or its last context message.
				if len(turn.Context) > 0 && !turn.prompt {
					t.Fatalf("%s: turn %d has %d context message(s) and no input", fm.name(), i+1, len(turn.Context))
				}
			}
			var edits []edit
			for _, r := range h.Results {
				if r.Content.Start < 0 || r.Content.End > len(b) || r.Content.Start > r.Content.End {
					t.Fatalf("%s: content span %v of %d bytes", fm.name(), r.Content, len(b))
				}
				r.Decode(b)
				if r.Content.End > r.Content.Start {
					edits = append(edits, edit{Span: r.Content, New: r.Encode("cut")})
				}
			}
			out := splice(b, edits)
			if sent := (sentBody{in: b, edits: edits}); sent.size() != len(out) || !bytes.Equal(readAll(t, sent.reader()), out) {
				t.Fatalf("%s: the body as sent differs from the splice", fm.name())
			}
			if json.Valid(b) && !json.Valid(out) {
				t.Fatalf("%s: the rewrite made invalid JSON: %q", fm.name(), out)
			}
			again, err := walkBody(out, fm, nil)
			if err != nil {
				t.Fatalf("%s: the rewritten body no longer parses: %v", fm.name(), err)
			}
			if n, m := len(buildHistory(again.Items).Results), len(h.Results); n != m {
				t.Fatalf("%s: %d results after the rewrite, %d before", fm.name(), n, m)
			}
		}
	})
}

// FuzzEvents: the event splitter and every reply parser take any stream
// without panicking.
func FuzzEvents(f *testing.F) {
	for _, wc := range wireCases {
		var b bytes.Buffer
		for _, ev := range wc.reply("m", "hi", nil, wiretest.Usage{Input: 3, Output: 1}).Events {
			b.WriteString(ev.Encode())
		}
		f.Add(b.Bytes())
	}
	formats := []wireFormat{anthropicFormat{}, responsesFormat{}, chatFormat{}, geminiFormat{}}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, fm := range formats {
			p := fm.newReply()
			var out bytes.Buffer
			n, err := relayEvents(&out, nil, bufio.NewReaderSize(bytes.NewReader(b), eventBuffer), p)
			if err != nil || n.n != int64(len(b)) || !bytes.Equal(out.Bytes(), b) {
				t.Fatalf("%s: relayed %d of %d bytes (err %v)", fm.name(), n.n, len(b), err)
			}
			p.body(b)
			p.reply()
		}
	})
}

// TestReuseMatchesFullParse: a parse that reuses the previous request's
// elements reads exactly what a full parse reads, in every format, as
// the history grows — and falls back to a full parse when the client
// changes an earlier element.
func TestReuseMatchesFullParse(t *testing.T) {
	for _, wc := range wireCases {
		t.Run(wc.name, func(t *testing.T) {
			var steps []step
			var prev *request
			reused := 0
			for i := range 8 {
				steps = append(steps, step{id: fmt.Sprintf("c%d", i), tool: "shell", args: `{"n":1}`, result: strings.Repeat("out\n", i+1)})
				body := wc.body("m", "hi", steps)
				if i == 5 {
					steps[0].result = "changed" // the client rewrote an old result
					body = wc.body("m", "hi", steps)
				}
				got, err := walkBody(body, wc.format, prev)
				if err != nil {
					t.Fatal(err)
				}
				want, err := walkBody(body, wc.format, nil)
				if err != nil {
					t.Fatal(err)
				}
				if i == 5 && got.Reused != 0 {
					t.Errorf("step %d: reused %d elements of a history the client changed", i, got.Reused)
				}
				reused += got.Reused
				if !reflect.DeepEqual(summarize(got), summarize(want)) || !reflect.DeepEqual(got.Elems, want.Elems) {
					t.Fatalf("step %d: the reusing parse differs:\n%v\n%v", i, summarize(got), summarize(want))
				}
				prev = got
			}
			if reused == 0 {
				t.Errorf("no element was ever reused")
			}
		})
	}
}

// summarize is what a parse found, without its closures.
func summarize(r *request) []string {
	var out []string
	for _, it := range r.Items {
		s := fmt.Sprintf("%d %q %v", it.Kind, it.Text, it.Calls)
		if it.Result != nil {
			text, ok := it.Result.Decode(r.body)
			s += fmt.Sprintf(" %s %v %v %q %v", it.Result.CallID, it.Result.IsError, it.Result.Content, text, ok)
		}
		out = append(out, s)
	}
	return append(out, r.Model, string(r.System), string(r.Tools), r.Key, fmt.Sprint(r.seed()))
}

// FuzzCacheLifetime: on any body the lifetime readers never panic and
// return a documented lifetime; on valid JSON they agree with a reading of
// encoding/json's token stream (any cache_control object with a "ttl" of
// "1h" at any depth; any top-level "prompt_cache_retention" of "24h").
func FuzzCacheLifetime(f *testing.F) {
	for _, b := range seedBodies() {
		f.Add(b)
	}
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"type":"text","text":"\"cache_control\":{\"ttl\":\"1h\"}"}]}]}`))
	f.Add([]byte(`{"cache_control":{"ttl":"5m","ttl":"1h"}}`))
	f.Add([]byte(`{"a":{"cache_control":"1h","b":[{"cache_control":{"ttl":["1h"]}}]}}`))
	f.Add([]byte(`{"prompt_cache_retention":"in-memory","x":{"prompt_cache_retention":"24h"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		long, day := anthropicLifetime(b), openAILifetime(b)
		if long != anthropicCacheLifetime && long != anthropicLongCacheLifetime {
			t.Fatalf("anthropic lifetime %s", long)
		}
		if day != 0 && day != openAICacheLifetime {
			t.Fatalf("openai lifetime %s", day)
		}
		if !json.Valid(b) {
			return
		}
		wantLong, wantDay := refLifetimes(t, b)
		if (long == anthropicLongCacheLifetime) != wantLong {
			t.Fatalf("anthropic: scanner %s, token stream says 1h: %v", long, wantLong)
		}
		if (day == 0) != wantDay {
			t.Fatalf("openai: scanner %s, token stream says 24h: %v", day, wantDay)
		}
	})
}

// refLifetimes reads b's token stream: whether a cache_control object
// has a "ttl" of "1h", and whether the top-level object has a
// "prompt_cache_retention" of "24h".
func refLifetimes(t *testing.T, b []byte) (long, day bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // a number too large for a float64 is still JSON
	// value reads the value starting with tok; cc is set when it is the
	// value of a cache_control key, top when it is the document.
	var value func(tok json.Token, cc, top bool)
	value = func(tok json.Token, cc, top bool) {
		d, ok := tok.(json.Delim)
		if !ok {
			return
		}
		for dec.More() {
			key := ""
			if d == '{' {
				k, err := dec.Token()
				if err != nil {
					t.Fatal(err)
				}
				key = k.(string)
			}
			v, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			if cc && key == "ttl" && v == "1h" {
				long = true
			}
			if top && key == "prompt_cache_retention" && v == "24h" {
				day = true
			}
			value(v, d == '{' && key == "cache_control", false)
		}
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
	}
	tok, err := dec.Token()
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		// Only an object can carry either; a top-level array may still
		// hold cache_control objects.
		value(tok, false, false)
		return long, false
	}
	value(tok, false, true)
	return long, day
}
