package harness_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentharness/harness"
)

// requestLog is a Recorder with AddRequest: it keeps a
// line per request and per round.
type requestLog struct {
	mu    sync.Mutex
	lines []string
	fail  error
}

func (l *requestLog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *requestLog) BeginTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	return nil
}

func (l *requestLog) AddRound(ctx context.Context, conv *harness.Conversation, turn *harness.Turn, round *harness.Round) error {
	l.add("round %d.%d", turn.Index, round.Index)
	return nil
}

func (l *requestLog) EndTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	return nil
}

func (l *requestLog) AddRequest(ctx context.Context, conv *harness.Conversation, turn *harness.Turn, req *harness.Request) error {
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	l.add("request %d.%d system=%q tools=[%s] final=%v", req.Turn, req.Round, req.System, strings.Join(names, " "), req.Final)
	return l.fail
}

func TestRequestRecorder(t *testing.T) {
	ctx := context.Background()
	tools := []harness.Tool{echoTool("echo", harness.ReadOnly), echoTool("shout", harness.ReadOnly)}

	t.Run("every request, the synthesis call without tools", func(t *testing.T) {
		rec := &requestLog{}
		m := &stepModel{steps: []func(*harness.Request) *harness.Response{
			calls(call("c1", "echo", `{"text":"a"}`)),
			calls(call("c2", "echo", `{"text":"b"}`)),
			answer("done"),
		}}
		a, err := harness.New(m, &harness.Options{System: "be brief", Tools: tools, MaxRounds: 1, Recorder: rec})
		if err != nil {
			t.Fatal(err)
		}
		res, err := a.Run(ctx, harness.NewConversation(""), "go")
		if err != nil || res.Outcome != harness.RoundLimit {
			t.Fatalf("%v %v", res.Outcome, err)
		}
		want := []string{
			`request 1.1 system="be brief" tools=[echo shout] final=false`,
			"round 1.1",
			`request 1.2 system="be brief" tools=[] final=true`,
			"round 1.2",
		}
		if strings.Join(rec.lines, "\n") != strings.Join(want, "\n") {
			t.Errorf("recorded\n%s\nwant\n%s", strings.Join(rec.lines, "\n"), strings.Join(want, "\n"))
		}
		// The recorder saw the very requests the model got.
		if len(m.reqs) != 2 || len(m.reqs[0].Tools) != 2 || m.reqs[0].System != "be brief" {
			t.Errorf("model requests %+v", m.reqs)
		}
	})

	t.Run("a retried request is recorded again", func(t *testing.T) {
		rec := &requestLog{}
		n := 0
		model := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
			n++
			if n == 1 {
				return nil, fmt.Errorf("provider said 400: %w", harness.ErrContextTooLarge)
			}
			return answer("ok")(req), nil
		})
		a, err := harness.New(model, &harness.Options{Tools: tools, Recorder: rec})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Run(ctx, harness.NewConversation(""), "go"); err != nil {
			t.Fatal(err)
		}
		want := `request 1.1 system="" tools=[echo shout] final=false|request 1.1 system="" tools=[echo shout] final=false|round 1.1`
		if got := strings.Join(rec.lines, "|"); got != want {
			t.Errorf("recorded %s, want %s", got, want)
		}
	})

	t.Run("an error stops the run before the model is called", func(t *testing.T) {
		rec := &requestLog{fail: errors.New("disk full")}
		m := &stepModel{steps: []func(*harness.Request) *harness.Response{answer("never")}}
		a, err := harness.New(m, &harness.Options{Tools: tools, Recorder: rec})
		if err != nil {
			t.Fatal(err)
		}
		res, err := a.Run(ctx, harness.NewConversation(""), "go")
		if err == nil || !strings.Contains(err.Error(), "disk full") || res.Outcome != harness.Error || len(m.reqs) != 0 {
			t.Errorf("outcome %s, err %v, %d model calls", res.Outcome, err, len(m.reqs))
		}
	})
}
