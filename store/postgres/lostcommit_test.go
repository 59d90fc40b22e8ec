package postgres

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"github.com/agentharness/harness/store/internal/storefix"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentharness/harness"
)

// relay is a loopback TCP proxy in front of the test server's unix
// socket. Armed, it loses the reply to the next COMMIT the way a dropped
// connection does: the server has committed and sent CommandComplete
// "COMMIT", and the relay closes both sides instead of forwarding it, so
// the client sees its batch fail. It watches the server's messages rather
// than the client's bytes because pgx sends a cached statement by name:
// the text "COMMIT" crosses the wire only when it is first prepared.
type relay struct {
	t      testing.TB
	ln     net.Listener
	socket string
	// dsn reaches the database through the relay.
	dsn   string
	armed atomic.Bool
	// lost receives one value each time a commit's reply was withheld.
	lost chan struct{}

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

// newRelay starts a relay to the database of dsn; the test's cleanup
// stops it.
func newRelay(t testing.TB, dsn string) *relay {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := url.URL{Scheme: "postgres", User: url.User(cfg.User), Host: ln.Addr().String(), Path: "/" + cfg.Database,
		RawQuery: url.Values{"sslmode": {"disable"}}.Encode()}
	r := &relay{t: t, ln: ln, dsn: u.String(), lost: make(chan struct{}, 1),
		socket: filepath.Join(cfg.Host, ".s.PGSQL."+strconv.Itoa(int(cfg.Port)))}
	r.wg.Go(r.accept)
	t.Cleanup(r.stop)
	return r
}

func (r *relay) accept() {
	for {
		client, err := r.ln.Accept()
		if err != nil {
			return // stopped
		}
		srv, err := net.Dial("unix", r.socket)
		if err != nil {
			r.t.Errorf("relay: %v", err)
			client.Close()
			continue
		}
		r.mu.Lock()
		r.conns = append(r.conns, client, srv)
		r.mu.Unlock()
		r.wg.Go(func() {
			_, _ = io.Copy(srv, client)
			srv.Close()
			client.Close()
		})
		r.wg.Go(func() { r.down(client, srv) })
	}
}

// down forwards the server's messages to the client, one message at a
// time, until the connection ends or, armed, a COMMIT's reply comes.
func (r *relay) down(client, srv net.Conn) {
	defer client.Close()
	defer srv.Close()
	in, out := bufio.NewReader(srv), bufio.NewWriter(client)
	for {
		// A backend message: a type byte, then its length (which counts
		// itself), then the rest.
		msg := make([]byte, 5)
		if _, err := io.ReadFull(in, msg); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(msg[1:]))
		msg = append(msg, make([]byte, n-4)...)
		if _, err := io.ReadFull(in, msg[5:]); err != nil {
			return
		}
		if msg[0] == 'C' && string(msg[5:]) == "COMMIT\x00" && r.armed.CompareAndSwap(true, false) {
			_ = out.Flush() // the replies before the COMMIT's
			r.lost <- struct{}{}
			return
		}
		if _, err := out.Write(msg); err != nil {
			return
		}
		if in.Buffered() == 0 {
			if err := out.Flush(); err != nil {
				return
			}
		}
	}
}

func (r *relay) stop() {
	r.ln.Close()
	r.mu.Lock()
	for _, c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// TestLostCommitReply loses the reply to the COMMIT of a round's write
// (the server committed the round and the events observed before it, the
// client sees the write fail and requeues the events), then resumes and
// ends the turn normally: every event is stored once, the policy event's
// two view cuts once each, and the transcript holds the round once.
func TestLostCommitReply(t *testing.T) {
	ctx := context.Background()
	dsn := server.DSN(t)
	r := newRelay(t, dsn)
	s := openTest(t, r.dsn)
	conv := harness.NewConversation("c_lost_reply")
	turn := &harness.Turn{Index: 1, Input: "go", Started: time.Now()}
	conv.Turns = append(conv.Turns, turn)
	if err := s.BeginTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	observed := lostReplyEvents(conv.ID)
	for _, e := range observed {
		s.Observe(e)
	}
	round := storefix.BenchRound(1, 1)
	r.armed.Store(true)
	if err := s.AddRound(ctx, conv, turn, round); err == nil {
		t.Fatal("the round's write succeeded although its COMMIT's reply was lost")
	}
	select {
	case <-r.lost:
	case <-time.After(2 * time.Minute): // a hang, not a slow machine
		t.Fatal("the relay never saw the round's COMMIT")
	}
	// The premise: the server committed what the client saw fail.
	if n := count(t, dsn, "rounds", conv.ID); n != 1 {
		t.Fatalf("%d rounds committed by the write whose reply was lost, want 1", n)
	}
	if n := count(t, dsn, "events", conv.ID); n != len(observed) {
		t.Fatalf("%d events committed by the write whose reply was lost, want %d", n, len(observed))
	}

	if err := s.ResumeTurn(ctx, conv, turn); err != nil {
		t.Fatalf("ResumeTurn after the lost reply: %v", err)
	}
	turn.Rounds = append(turn.Rounds, round)
	turn.Outcome, turn.Ended = harness.Answered, time.Now()
	if err := s.EndTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	if err := s.EventErr(); err != nil {
		t.Fatal(err)
	}
	stored, err := s.Events(ctx, conv.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := details(stored), details(observed); !slices.Equal(got, want) {
		t.Errorf("stored events %q, want %q", got, want)
	}
	if n := count(t, dsn, "view_cuts", conv.ID); n != 2 {
		t.Errorf("%d view cuts stored, want the policy event's 2", n)
	}
	loaded, err := s.Load(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded.Turns) != 1 || len(loaded.Turns[0].Rounds) != 1 || loaded.Turns[0].Outcome != harness.Answered {
		t.Fatalf("after the lost reply: %d turn(s), %+v", len(loaded.Turns), loaded.Turns)
	}
}

// lostReplyEvents are the events of TestLostCommitReply's turn: ordinary
// ones, a policy event carrying two view cuts of one call in one request,
// and the turn's end (kept once per turn by its own rule too).
func lostReplyEvents(convID string) []harness.Event {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e := func(i int, kind harness.EventKind) harness.Event {
		return harness.Event{Kind: kind, Conversation: convID, Turn: 1, Round: 1, Time: at.Add(time.Duration(i) * time.Second),
			Detail: fmt.Sprintf("%d %s", i, kind)}
	}
	policy := e(3, harness.EventPolicy)
	policy.Round = 2
	policy.Policy = "budget"
	policy.Call = &harness.ToolCall{ID: "call_1", Name: "fetch"}
	policy.Result = &harness.ResultInfo{Tool: "fetch", BytesIn: 9000, BytesShown: 100, Cuts: []harness.Cut{
		{Kind: harness.CutTrimmed, By: "budget", BytesIn: 9000, BytesOut: 4000, Locator: "call:call_1"},
		{Kind: harness.CutCleared, By: "budget", BytesIn: 4000, BytesOut: 100, Locator: "call:call_1"},
	}}
	policy.Data = map[string]any{"unit": "chars", "size_in": 9000, "size_out": 100, "marker": "[cut]"}
	end := e(4, harness.EventTurnEnd)
	end.Outcome = harness.Answered
	return []harness.Event{e(0, harness.EventTurnStart), e(1, harness.EventRequest), e(2, harness.EventToolResult), policy, end}
}

// details lists the events by their Detail, which names each uniquely.
func details(events []harness.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Detail)
	}
	return out
}
