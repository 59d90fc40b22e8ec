package benchcore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/replay"
	"github.com/agentharness/harness/tokens"
)

// Through measures an OpenAI-compatible proxy on the bench's recordings:
// each recorded call is sent, as the Chat Completions request "none"
// would send (the whole history, the recorded tool results whole), to
// URL; the proxy forwards it to a recording upstream listening on
// Listener, which answers with the recording's assistant message for that
// call (tool calls included, streamed) and keeps the body it received.
// What arrived is measured as the presets' requests are (o200k tokens,
// cached prefix, evidence characters, needles visible) and summed in a
// row named "through:HOST:PORT". Recoverable counts only what arrived
// visible: the bench cannot know what a foreign proxy could still show.
type Through struct {
	// URL is the proxy's base URL as an OpenAI client takes it
	// (http://127.0.0.1:8080/v1): requests go to URL + "/chat/completions".
	URL string
	// Listener is where the recording upstream serves; the proxy under
	// test must forward to its address. The bench closes it.
	Listener net.Listener
	// Client sends the requests (default: a client with no timeout;
	// the context bounds the run).
	Client *http.Client
}

// name is the row's name: "through:" and the proxy's host and port.
func (t *Through) name() string {
	if u, err := url.Parse(t.URL); err == nil && u.Host != "" {
		return "through:" + u.Host
	}
	return "through:" + t.URL
}

// preset is the row's name and description; it is never replayed as a
// preset (runThrough replays it).
func (t *Through) preset() Preset {
	return Preset{Name: t.name(), Doc: "what reached the recording upstream through the proxy at " + t.URL +
		" when each call was sent as none sends it (recoverable: only what arrived visible)",
		Build: func(replay.Env) (*replay.Config, error) {
			return nil, errors.New("a --through row is replayed through its proxy, not as a preset")
		}}
}

// throughSession is a Through being measured: its recording upstream
// listening, the first error it reported kept.
type throughSession struct {
	t      *Through
	up     *wiretest.Server
	client *http.Client
	mu     sync.Mutex
	upErr  error
}

// start starts the recording upstream on t.Listener.
func (t *Through) start() (*throughSession, error) {
	if t.Listener == nil {
		return nil, errors.New("bench: --through needs a listener for the recording upstream")
	}
	s := &throughSession{t: t, client: t.Client}
	s.up = wiretest.Start(t.Listener, func(format string, args ...any) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.upErr == nil {
			s.upErr = fmt.Errorf("recording upstream: "+format, args...)
		}
	})
	if s.client == nil {
		s.client = &http.Client{}
	}
	return s, nil
}

func (s *throughSession) close() { s.up.Close() }

// replay replays rec through the proxy, one call at a time. Recordings go
// through one after another, in the bench's order.
// noShown leaves out the per-request lists of tool messages, as the
// in-process replays of a table do.
func (s *throughSession) replay(ctx context.Context, rec *replay.Recording, counter tokens.Counter, needles []replay.Needle, noShown bool) (*replay.Report, error) {
	run := &throughRun{t: s.t, up: s.up, client: s.client, rec: rec}
	pol := replay.Policy{Name: s.t.name(), New: func(replay.Env) (*replay.Config, error) {
		return &replay.Config{Policies: []harness.ViewPolicy{run}}, nil
	}}
	rep, err := replay.Replay(ctx, rec, pol, &replay.Options{Counter: counter, Needles: needles, NoShown: noShown})
	s.mu.Lock()
	if err == nil {
		err = s.upErr
	}
	s.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("bench: %s through %s: %w", rec.Source, s.t.URL, err)
	}
	return rep, nil
}

// throughRun sends one recording's calls through the proxy.
type throughRun struct {
	t      *Through
	up     *wiretest.Server
	client *http.Client
	rec    *replay.Recording
	// turn and call locate the recorded call the next request answers.
	turn, call int
}

// ApplyView sends v (none's request for the next recorded call) through
// the proxy and replaces its messages and tools with what reached the
// recording upstream.
func (x *throughRun) ApplyView(ctx context.Context, v *harness.View) error {
	rc, err := x.next()
	if err != nil {
		return err
	}
	model := x.rec.Model
	if model == "" {
		model = "gpt-4o"
	}
	var calls []wiretest.Call
	for _, tc := range rc.Assistant.ToolCalls {
		calls = append(calls, wiretest.Call{ID: tc.ID, Name: tc.Name, Args: string(tc.Args)})
	}
	x.up.Enqueue(wiretest.ChatStream(model, rc.Assistant.Text(), calls, wiretest.Usage{Output: rc.Usage.Output}))
	body, err := chatRequestBody(model, v.Messages, v.SentTools())
	if err != nil {
		return err
	}
	if err := x.post(ctx, body); err != nil {
		return err
	}
	got := x.up.TakeRequests()
	if len(got) == 0 {
		return errors.New("the proxy answered without sending a request upstream")
	}
	if n := x.up.Pending(); n > 0 {
		return fmt.Errorf("the proxy left %d recorded answers unasked", n)
	}
	// A proxy that asks more than once per call is measured by its last request.
	msgs, tools, err := parseChatRequest(got[len(got)-1].Body)
	if err != nil {
		return fmt.Errorf("the request that reached the upstream: %w", err)
	}
	v.Messages, v.Origins, v.Tools = msgs, make([]harness.Origin, len(msgs)), tools
	return nil
}

// next returns the recorded call the next request answers.
func (x *throughRun) next() (*replay.Call, error) {
	for x.turn < len(x.rec.Turns) {
		if t := x.rec.Turns[x.turn]; x.call < len(t.Calls) {
			x.call++
			return t.Calls[x.call-1], nil
		}
		x.turn, x.call = x.turn+1, 0
	}
	return nil, errors.New("more requests than recorded calls")
}

// post sends body to the proxy and reads the whole answer.
func (x *throughRun) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(x.t.URL, "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("--through: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer harness-bench")
	resp, err := x.client.Do(req)
	if err != nil {
		return fmt.Errorf("--through: %w", err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("--through: reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("--through: the proxy answered %s: %.200s", resp.Status, answer)
	}
	return nil
}
