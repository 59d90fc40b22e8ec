package harness_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store/sqlite"
)

// fakeClock is a clock that only moves when told, safe for tools that
// run concurrently.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) Wait(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }

// TestRoundsTakeTheEngineClock: each round records when its response
// arrived, and the turn when it started and ended, on Options.Now.
func TestRoundsTakeTheEngineClock(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := &fakeClock{now: t0}
	slow := echoTool("echo", harness.ReadOnly)
	echo := slow.Func
	slow.Func = func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
		clock.Wait(time.Minute)
		return echo(ctx, c)
	}
	m := &stepModel{steps: []func(*harness.Request) *harness.Response{
		calls(call("a", "echo", `{"text":"hello"}`)), answer("done"),
	}}
	a := newAgent(t, m, &harness.Options{Tools: []harness.Tool{slow}, Now: clock.Now})
	conv := harness.NewConversation("")
	if _, err := a.Run(context.Background(), conv, "go"); err != nil {
		t.Fatal(err)
	}
	turn := conv.Turns[0]
	tests := []struct {
		what      string
		got, want time.Time
	}{
		{"turn started", turn.Started, t0},
		{"round 1 answered", turn.Rounds[0].Answered, t0},
		{"round 2 answered", turn.Rounds[1].Answered, t0.Add(time.Minute)},
		{"turn ended", turn.Ended, t0.Add(time.Minute)},
	}
	for _, tt := range tests {
		if !tt.got.Equal(tt.want) {
			t.Errorf("%s at %v, want %v", tt.what, tt.got, tt.want)
		}
	}
}

// TestViewIdleAfterSQLiteLoad: a turn recorded into a real SQLite store
// pauses inside itself (a call waits three hours, as an approval nobody
// answers until morning); another process loads the conversation and
// builds the turn's next request, whose Idle is the time since the last
// stored response, not 0.
func TestViewIdleAfterSQLiteLoad(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "harness.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := &fakeClock{now: t0}
	waits := echoTool("echo", harness.ReadOnly)
	echo := waits.Func
	waits.Func = func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
		clock.Wait(3 * time.Hour)
		return echo(ctx, c)
	}
	opts := &harness.Options{Tools: []harness.Tool{waits}, Recorder: st, Now: clock.Now}
	first, err := harness.NewEngine(opts)
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("c_paused")
	turn, err := first.BeginTurn(ctx, conv, "go")
	if err != nil {
		t.Fatal(err)
	}
	view, _, err := first.Request(ctx, conv, turn, first.Tools(), false, false)
	if err != nil {
		t.Fatal(err)
	}
	round := first.Round(ctx, conv, turn, view, calls(call("a", "echo", `{"text":"hello"}`))(nil))
	round.Results = first.RunCalls(ctx, conv, turn, round, view)
	if err := first.AppendRound(ctx, conv, turn, round); err != nil {
		t.Fatal(err)
	}

	// The next step, in another process: a fresh engine on the loaded
	// conversation.
	clock.Wait(2 * time.Minute)
	loaded, err := st.Load(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	next, err := harness.NewEngine(opts)
	if err != nil {
		t.Fatal(err)
	}
	lt := loaded.LastTurn()
	v, err := next.View(ctx, loaded, lt, next.Tools(), false, false)
	if want := 3*time.Hour + 2*time.Minute; err != nil || v.Idle != want {
		t.Errorf("the loaded turn's next request: Idle %s, %v; want %s since round 1 was answered", v.Idle, err, want)
	}
}
