package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentharness/harness/internal/clearnote"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/provider/scripted"
	"github.com/agentharness/harness/tokens"
)

func o200k(t testing.TB) tokens.Counter {
	t.Helper()
	c, err := tokens.O200k()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// filler is text of about n tokens (o200k counts " word7" as 2 tokens).
func filler(seed, n int) string {
	var b strings.Builder
	for i := range n / 2 {
		fmt.Fprintf(&b, " w%d", (seed*7919+i)%1000)
	}
	return b.String()
}

// compactConv is a conversation of one turn per entry of rounds, each
// round one read call whose result is about resultTokens tokens.
func compactConv(rounds []int, resultTokens int) *harness.Conversation {
	conv := harness.NewConversation("conv")
	for ti, n := range rounds {
		turn := &harness.Turn{Index: ti + 1, Input: fmt.Sprintf("question %d", ti+1)}
		for r := 1; r <= n; r++ {
			id := fmt.Sprintf("call_t%d_r%d", ti+1, r)
			c := harness.ToolCall{ID: id, Name: "read", Args: json.RawMessage(fmt.Sprintf(`{"path":"f%d_%d.txt"}`, ti+1, r))}
			res := &harness.ToolResult{CallID: id, Tool: "read", Parts: []harness.Part{harness.TextPart(filler(ti*100+r, resultTokens))}}
			res.Bytes = res.PayloadSize()
			turn.Rounds = append(turn.Rounds, &harness.Round{Index: r,
				Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{c}}, Results: []*harness.ToolResult{res}})
		}
		conv.Turns = append(conv.Turns, turn)
	}
	return conv
}

func viewTokens(t testing.TB, v *harness.View) int {
	return tokens.CountRequest(o200k(t), v.Request(0))
}

func viewJSON(v *harness.View) string {
	b, _ := json.Marshal(v.Messages)
	return string(b)
}

func TestCompactBelowHighWaterLeavesViewAlone(t *testing.T) {
	conv := compactConv([]int{6}, 500)
	v := harness.BuildView(conv, conv.Turns[0], "sys", nil, false)
	before := viewJSON(v)
	window := int(float64(viewTokens(t, v)) / 0.74)
	if err := (&CompactPolicy{Unbounded: true, Window: window}).ApplyView(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	if viewJSON(v) != before || len(conv.Notes) != 0 {
		t.Fatal("compacted below HighWater")
	}
}

func TestCompactClearsOldResultsToTarget(t *testing.T) {
	conv := compactConv([]int{4, 8}, 500)
	// One result was spilled by the ceiling guard: its placeholder points
	// at the spill file.
	spilled := conv.Turns[0].Rounds[0].Results[0]
	spilled.Cuts = []harness.Cut{{Kind: harness.CutSpilled, Locator: ".harness/spill/call_t1_r1-read.txt"}}
	turn := conv.Turns[1]
	v := harness.BuildView(conv, turn, "sys", nil, false)
	total := viewTokens(t, v)
	window := int(float64(total) / 0.8) // at 80%: above HighWater
	var events []harness.Event
	ctx := harness.WithObserver(context.Background(), func(e harness.Event) { events = append(events, e) })
	p := &CompactPolicy{Unbounded: true, Window: window}
	if err := p.ApplyView(ctx, v); err != nil {
		t.Fatal(err)
	}
	after := viewTokens(t, v)
	if float64(after) > 0.55*float64(window) {
		t.Fatalf("after compaction %d tokens > 55%% of %d", after, window)
	}
	if saved := total - after; float64(saved) < 0.10*float64(window) {
		t.Fatalf("cleared %d tokens, less than the 10%% chunk", saved)
	}
	// Oldest first, whole rounds, the newest three rounds untouched.
	var cleared []string
	for i, o := range v.Origins {
		if o.Result == nil {
			continue
		}
		if len(o.Cuts) == 1 && o.Cuts[0].Kind == harness.CutCleared {
			cleared = append(cleared, fmt.Sprintf("t%dr%d", o.Turn, o.Round))
			text := v.Messages[i].Text()
			if strings.Count(text, "\n") != 0 || !strings.Contains(text, "read") || !strings.Contains(text, fmt.Sprintf("%d bytes", o.Result.Bytes)) ||
				!strings.Contains(text, `recall with {"call_id":"`+o.Result.CallID+`"}`) {
				t.Errorf("placeholder %q", text)
			}
			if o.Cuts[0].BytesIn != o.Result.Bytes || o.Cuts[0].BytesOut != len(text) || o.Cuts[0].By != "compact" {
				t.Errorf("cut %+v", o.Cuts[0])
			}
		} else if v.Messages[i].Text() != o.Result.FullText() {
			t.Errorf("kept result t%dr%d changed", o.Turn, o.Round)
		}
	}
	if len(cleared) == 0 || cleared[0] != "t1r1" {
		t.Fatalf("cleared %v", cleared)
	}
	for k := range cleared {
		want := fmt.Sprintf("t%dr%d", 1+(k)/4, 1+k%4)
		if cleared[k] != want {
			t.Fatalf("not oldest first: %v", cleared)
		}
	}
	if n := len(cleared); n > 12-3 {
		t.Fatalf("cleared %d results: the newest three rounds must stay", n)
	}
	if first := v.Messages[4].Text(); v.Origins[4].Result != spilled || !strings.Contains(first, "read the file .harness/spill/call_t1_r1-read.txt, or call recall") {
		t.Fatalf("spilled placeholder: %q", first)
	}
	// The decision is recorded once, and the notice is already in place.
	if len(conv.Notes) != 1 || conv.Notes[0].Text != "" || conv.Notes[0].ClearTurn == 0 {
		t.Fatalf("notes %+v", conv.Notes)
	}
	if v.Messages[1].Text() != clearnote.Text {
		t.Fatalf("notice not shown: %q", v.Messages[1].Text())
	}
	if len(events) != 1 || events[0].Data["stage"] != "clear" {
		t.Fatalf("events %+v", events)
	}
	// The event names its conversation and turn, so a store files it under
	// them (Store.Events finds it).
	if e := events[0]; e.Conversation != conv.ID || e.Turn != turn.Index {
		t.Errorf("the clear's event is of conversation %q turn %d, want %q turn %d", e.Conversation, e.Turn, conv.ID, turn.Index)
	}

	// The next view built from the transcript, by a fresh policy, is the
	// same request: the clearing is reproduced, not redecided.
	v2 := harness.BuildView(conv, turn, "sys", nil, false)
	if err := (&CompactPolicy{Unbounded: true, Window: window}).ApplyView(context.Background(), v2); err != nil {
		t.Fatal(err)
	}
	if viewJSON(v2) != viewJSON(v) || len(conv.Notes) != 1 {
		t.Fatal("the clearing was not reproduced exactly")
	}
}

func TestCompactCalibrationAndBadConfig(t *testing.T) {
	conv := compactConv([]int{8}, 500)
	v := harness.BuildView(conv, conv.Turns[0], "", nil, false)
	window := int(float64(viewTokens(t, v)) / 0.70) // 70%: under HighWater by our count
	cal := tokens.NewCalibrator()
	cal.Set("other-tokenizer", 1.3) // 91% by the model's count
	p := &CompactPolicy{Unbounded: true, Window: window, Model: "other-tokenizer", Calibrator: cal}
	if err := p.ApplyView(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	if len(conv.Notes) != 1 {
		t.Fatal("calibrated count did not trigger compaction")
	}
	if got := 1.3 * float64(viewTokens(t, v)); got > 0.55*float64(window) {
		t.Fatalf("calibrated size after compaction %.0f > target", got)
	}
	if err := (&CompactPolicy{HighWater: 0.5, Target: 0.6}).ApplyView(context.Background(), v); err == nil {
		t.Fatal("Target above HighWater accepted")
	}
	// A negative ClearOld once meant off: it is an error, not the default
	// (which would turn the trigger on), even with NoClearOld set.
	for _, p := range []*CompactPolicy{{ClearOld: -1}, {ClearOld: -1, NoClearOld: true}} {
		err := p.ApplyView(context.Background(), v)
		if err == nil || !strings.Contains(err.Error(), "compact: ClearOld -1 is negative: 0 is the default (12000), NoClearOld turns the trigger off") {
			t.Fatalf("negative ClearOld: %v", err)
		}
	}
	// QuotedContext spells off the same way.
	if err := (&CompactPolicy{KeepQuoted: true, QuotedContext: -1}).ApplyView(context.Background(), v); err == nil ||
		!strings.Contains(err.Error(), "compact: QuotedContext -1 is negative: 0 is the default (3), NoQuotedContext keeps no context") {
		t.Fatalf("negative QuotedContext: %v", err)
	}
	for _, c := range []struct {
		p    *CompactPolicy
		want int
	}{{&CompactPolicy{KeepQuoted: true}, defaultQuotedContext}, {&CompactPolicy{KeepQuoted: true, QuotedContext: 1}, 1}, {&CompactPolicy{KeepQuoted: true, NoQuotedContext: true}, 0}} {
		cfg, err := c.p.config()
		if err != nil || cfg.quotedCtx != c.want {
			t.Errorf("QuotedContext %d, NoQuotedContext %v: context %d, %v; want %d", c.p.QuotedContext, c.p.NoQuotedContext, cfg.quotedCtx, err, c.want)
		}
	}
}

// noteRecorder is a harness.Recorder that persists notes.
type noteRecorder struct {
	mu    sync.Mutex
	notes []harness.Note
}

func (r *noteRecorder) BeginTurn(context.Context, *harness.Conversation, *harness.Turn) error {
	return nil
}
func (r *noteRecorder) AddRound(context.Context, *harness.Conversation, *harness.Turn, *harness.Round) error {
	return nil
}
func (r *noteRecorder) EndTurn(context.Context, *harness.Conversation, *harness.Turn) error {
	return nil
}
func (r *noteRecorder) AddNote(ctx context.Context, conv *harness.Conversation, n *harness.Note) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, *n)
	return nil
}

// A conversation whose measured size hovers between 74% and 76% of the
// window (the calibration factor jitters round to round, as it does with
// real providers) compacts once, not every round, and every request after
// that extends the one before (the prompt cache stays warm).
func TestCompactHysteresisWithoutThrash(t *testing.T) {
	const window = 20000
	conv := compactConv([]int{12}, 1000) // about 60% of the window
	cal := tokens.NewCalibrator()
	counter := tokens.NewCache(o200k(t), nil) // one cache for the view and the policy
	var fractions []float64
	jitter := harness.ViewPolicyFunc(func(ctx context.Context, v *harness.View) error {
		frac := 0.74
		if v.Round%2 == 0 {
			frac = 0.76
		}
		raw := tokens.CountRequest(counter, v.Request(0))
		cal.Set("m", frac*window/float64(raw))
		fractions = append(fractions, frac)
		return nil
	})
	small := harness.Tool{
		Spec: harness.ToolSpec{Name: "read", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			return harness.TextResult(filler(len(c.Args), 150)), nil
		},
	}
	var steps []scripted.Step
	for i := range 10 {
		steps = append(steps, scripted.Step{ToolCalls: []scripted.Call{scriptCall("read", fmt.Sprintf(`{"path":"small%d"}`, i))}})
	}
	steps = append(steps, scripted.Step{Text: "done"})
	rec := &stuckRecorder{}
	notes := &noteRecorder{}
	model := scripted.New(&scripted.Script{Steps: steps}, nil)
	agent, err := harness.New(rec.wrap(model), &harness.Options{
		Tools: []harness.Tool{small}, MaxRounds: 20, Recorder: notes, Observer: rec.observe,
		Policies: []harness.ViewPolicy{jitter, &CompactPolicy{Unbounded: true, Window: window, Model: "m", Calibrator: cal, Counter: counter}},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := agent.Run(context.Background(), conv, "go on")
	if err != nil || res.Outcome != harness.Answered {
		t.Fatalf("%v %s", err, res.Outcome)
	}
	evs := rec.policyEvents(compactName)
	if len(evs) != 1 || evs[0].Round != 2 {
		t.Fatalf("compacted %d times (want once, in round 2): %+v", len(evs), evs)
	}
	if len(notes.notes) != 1 || notes.notes[0].ClearTurn != 1 {
		t.Fatalf("notes persisted: %+v", notes.notes)
	}
	if len(fractions) != 11 {
		t.Fatalf("%d views", len(fractions))
	}
	assertAppendOnly(t, rec.reqs[1:])
}

// A request the provider rejects as too large is compacted to Target and
// retried once, even for a model whose window the table does not know.
func TestCompactOnOverflowThroughAgent(t *testing.T) {
	conv := compactConv([]int{10}, 800)
	counter := o200k(t)
	limit := 0
	var sizes []int
	model := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		n := tokens.CountRequest(counter, req)
		sizes = append(sizes, n)
		if limit == 0 {
			limit = n * 7 / 10
		}
		if n > limit {
			return nil, fmt.Errorf("400 prompt is too long: %w", harness.ErrContextTooLarge)
		}
		return &harness.Response{Message: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("fits")}}}, nil
	})
	agent, err := harness.New(model, &harness.Options{Policies: []harness.ViewPolicy{&CompactPolicy{Unbounded: true, Model: "mystery-model-7b"}}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := agent.Run(context.Background(), conv, "next")
	if err != nil || res.Answer != "fits" {
		t.Fatalf("err %v answer %q", err, res.Answer)
	}
	if len(sizes) != 2 || float64(sizes[1]) > 0.55*float64(sizes[0])+1 {
		t.Fatalf("request sizes %v: the retry should be at most 55%% of the rejected one", sizes)
	}
	if len(conv.Notes) != 1 {
		t.Fatalf("notes %+v", conv.Notes)
	}
}

func TestCompactSummarisesOldTurns(t *testing.T) {
	// Eleven turns whose inputs are large (inputs are never cleared), so
	// clearing results alone cannot reach the target.
	conv := compactConv([]int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 300)
	for _, turn := range conv.Turns {
		turn.Input = filler(turn.Index, 800)
	}
	current := conv.Turns[10]
	var got *harness.Request
	long := strings.Repeat("The user asked about the files; f1_1.txt holds the totals. ", 100)
	summarizer := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		got = req
		return &harness.Response{Message: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart(long)}},
			Usage: harness.Usage{Input: 1000, Output: 1200}}, nil
	})
	v := harness.BuildView(conv, current, "sys", nil, false)
	window := int(float64(viewTokens(t, v)) / 0.9)
	var events []harness.Event
	ctx := harness.WithObserver(context.Background(), func(e harness.Event) { events = append(events, e) })
	p := &CompactPolicy{Unbounded: true, Window: window, Summarizer: summarizer}
	if err := p.ApplyView(ctx, v); err != nil {
		t.Fatal(err)
	}
	if got == nil || !got.Final || len(got.Tools) != 0 || got.MaxOutputTokens != 600 ||
		!strings.Contains(got.Messages[1].Text(), "## Turn 5") || strings.Contains(got.Messages[1].Text(), "## Turn 6") {
		t.Fatalf("summary request: %+v", got)
	}
	var summary *harness.Note
	for _, n := range conv.Notes {
		if n.After > 0 {
			summary = n
		}
	}
	if summary == nil || summary.After != 5 || !strings.HasPrefix(summary.Text, "Summary of the conversation so far (turns 1–5") {
		t.Fatalf("notes %+v", conv.Notes)
	}
	body := summary.Text[strings.IndexByte(summary.Text, '\n')+1:]
	if n := o200k(t).Count(body); n > 600 || n < 550 {
		t.Fatalf("summary is %d tokens, want at most 600 (and cut close to it)", n)
	}
	// The view shows the summary instead of turns 1–5; the transcript
	// keeps them.
	if v.Messages[1].Text() != summary.Text || len(conv.Turns) != 11 {
		t.Fatal("summary not in place")
	}
	for _, o := range v.Origins {
		if o.Turn > 0 && o.Turn <= 5 {
			t.Fatalf("turn %d still in the view", o.Turn)
		}
	}
	if next := harness.BuildView(conv, current, "sys", nil, false); len(next.Messages) > len(v.Messages)+1 {
		t.Fatal("BuildView does not agree with the compacted view")
	}
	var stages []any
	for _, e := range events {
		stages = append(stages, e.Data["stage"])
	}
	if fmt.Sprint(stages) != "[clear summary]" || events[1].Usage == nil || events[1].Usage.Output != 1200 {
		t.Fatalf("events %v", stages)
	}
	// The same view, rebuilt, is reproduced without a new summary.
	v2 := harness.BuildView(conv, current, "sys", nil, false)
	notes := len(conv.Notes)
	got = nil
	if err := p.ApplyView(context.Background(), v2); err != nil {
		t.Fatal(err)
	}
	if got != nil || len(conv.Notes) != notes || viewJSON(v2) != viewJSON(v) {
		t.Fatalf("rebuilt view differs or summarised again (summarizer called: %v)", got != nil)
	}
}

func TestCompactPlaceholderWithoutRecall(t *testing.T) {
	c := &compaction{compactConfig: compactConfig{recall: false}, args: map[string]harness.ToolCall{
		"x": {ID: "x", Name: "grep", Args: json.RawMessage(`{"pattern":"` + strings.Repeat("a", 100) + `"}`)}}}
	c.v = &harness.View{Messages: []harness.Message{{Role: harness.RoleTool, ToolCallID: "x"}},
		Origins: []harness.Origin{{Turn: 1, Round: 1, Result: &harness.ToolResult{CallID: "x", Tool: "grep", IsError: true, Bytes: 42}}}}
	got := c.placeholder(0)
	want := `[cleared to save context: the error result of grep {"pattern":"` + strings.Repeat("a", 68) + `… (call x, 42 bytes). To see it again, it is stored under call id x.]`
	if got != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
}

// BenchmarkCompactApplyView measures one round's view of a 100-round
// conversation (about 100k tokens) that has been compacted before: the
// policy reproduces the clearing and counts the request. "warm" shares
// the policy (and its token cache) across rounds, as an agent does;
// "cold" counts everything from scratch.
func BenchmarkCompactApplyView(b *testing.B) {
	conv := compactConv([]int{100}, 1000)
	turn := conv.Turns[0]
	v := harness.BuildView(conv, turn, "sys", nil, false)
	window := int(float64(viewTokens(b, v)) / 0.8)
	if err := (&CompactPolicy{Unbounded: true, Window: window}).ApplyView(context.Background(), v); err != nil {
		b.Fatal(err)
	}
	b.Run("warm", func(b *testing.B) {
		p := &CompactPolicy{Unbounded: true, Window: window}
		for b.Loop() {
			if err := p.ApplyView(context.Background(), harness.BuildView(conv, turn, "sys", nil, false)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			p := &CompactPolicy{Unbounded: true, Window: window}
			if err := p.ApplyView(context.Background(), harness.BuildView(conv, turn, "sys", nil, false)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
