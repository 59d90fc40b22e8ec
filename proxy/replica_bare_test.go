package proxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/store"
)

// TestReplicasClaimWithoutContent: three replicas serve one conversation
// in turn, each request carrying every earlier result (30 KiB, cut). The
// claim log holds each decision without the result's content (every
// replica has it in its own request), and the store still keeps every
// byte of every result, whichever replica recorded its round.
func TestReplicasClaimWithoutContent(t *testing.T) {
	for _, wc := range wireCases {
		t.Run(wc.format.name(), func(t *testing.T) {
			r := newReplicaRig(t, 3, true)
			const rounds = 5
			_, steps := r.readLockFiles(t, wc, rounds)
			st, conv := storedConversation(t, r.dsn)
			claims, err := any(st).(store.Claimer).Claims(context.Background(), conv.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			decisions := 0
			for _, c := range claims {
				if c.Key[:2] == claimDecision+"|" {
					decisions++
				}
				if len(c.Value) > 16<<10 {
					t.Errorf("claim %s holds %d bytes: the result's content is in the log", c.Key, len(c.Value))
				}
			}
			if decisions != rounds {
				t.Errorf("%d decisions claimed, want %d", decisions, rounds)
			}
			if len(conv.Turns) != 1 || len(conv.Turns[0].Rounds) != rounds+1 {
				t.Fatalf("stored %d turns; want 1 turn of %d rounds", len(conv.Turns), rounds+1)
			}
			for i, rd := range conv.Turns[0].Rounds[:rounds] {
				if len(rd.Results) != 1 {
					t.Fatalf("round %d: %d results, want 1", i+1, len(rd.Results))
				}
				full, err := st.FullResult(context.Background(), conv.ID, rd.Results[0].CallID)
				if err != nil {
					t.Fatal(err)
				}
				if got := full.FullText(); got != steps[i].result {
					t.Errorf("round %d: stored %d bytes of the result, want its %d", i+1, len(got), len(steps[i].result))
				}
				if len(rd.Results[0].Cuts) == 0 {
					t.Errorf("round %d: the result is stored without its cut", i+1)
				}
			}
		})
	}
}

// TestReplicaClaimsTheAnswerBeforeTheResponseEnds: once a client has read
// a streamed answer to its end, the claim log already holds that
// answer's claim when another replica has served the conversation, so
// the client's next request, on another replica, does not wait for it.
// The store takes its time over an answer's claim (a claim made after
// the response ended would not be there yet), and the response's wait
// for it is lengthened so a loaded machine cannot outlast it. A
// conversation one replica serves alone does not wait: its response
// ends while the store still holds the claim back.
func TestReplicaClaimsTheAnswerBeforeTheResponseEnds(t *testing.T) {
	wc := wireCases[0]
	post := func(t *testing.T, url string, steps []step) {
		t.Helper()
		resp, err := http.Post(url+wc.path, "application/json", bytes.NewReader(wc.body("m", "list the files", steps)))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	first := []step{{id: "call_0", tool: "Bash", args: `{"command":"ls"}`, result: "a\nb\n"}}
	t.Run("alternating", func(t *testing.T) {
		held := &heldAnswers{delay: 2 * time.Second}
		r := newReplicaRigWith(t, 2, true, nil, func(_ int, cs *countingStore) store.Store { return heldStore{cs, held} })
		for _, px := range r.pxs {
			px.replicas.answerWait.Store(int64(time.Hour))
		}
		r.up.Enqueue(wc.reply("m", "", []wiretest.Call{{ID: "call_0", Name: "Bash", Args: `{"command":"ls"}`}}, wiretest.Usage{Input: 100, Output: 10}),
			wc.reply("m", "done", nil, wiretest.Usage{Input: 100, Output: 10}))
		post(t, r.urls[0], nil)
		post(t, r.urls[1], first)
		if keys := claimKeys(t, r.dsn); !slices.Contains(keys, roundClaimKey(claimAnswer, roundKey{1, 2})) {
			t.Errorf("claim log when the second response ended: %q; want the answer of turn 1 round 2", keys)
		}
	})
	t.Run("first answer", func(t *testing.T) {
		// Nothing tells yet whether the next request lands on this
		// replica: the first response ends once its answer is claimed.
		held := &heldAnswers{delay: 2 * time.Second}
		r := newReplicaRigWith(t, 1, true, nil, func(_ int, cs *countingStore) store.Store { return heldStore{cs, held} })
		r.pxs[0].replicas.answerWait.Store(int64(time.Hour))
		r.up.Enqueue(wc.reply("m", "", []wiretest.Call{{ID: "call_0", Name: "Bash", Args: `{"command":"ls"}`}}, wiretest.Usage{Input: 100, Output: 10}))
		post(t, r.urls[0], nil)
		if keys := claimKeys(t, r.dsn); !slices.Contains(keys, roundClaimKey(claimAnswer, roundKey{1, 1})) {
			t.Errorf("claim log when the first response ended: %q; want the answer of turn 1 round 1", keys)
		}
	})
	t.Run("alone", func(t *testing.T) {
		held := &heldAnswers{release: make(chan struct{}), except: roundClaimKey(claimAnswer, roundKey{1, 1})}
		r := newReplicaRigWith(t, 1, true, nil, func(_ int, cs *countingStore) store.Store { return heldStore{cs, held} })
		r.pxs[0].replicas.answerWait.Store(int64(time.Hour))
		r.up.Enqueue(wc.reply("m", "", []wiretest.Call{{ID: "call_0", Name: "Bash", Args: `{"command":"ls"}`}}, wiretest.Usage{Input: 100, Output: 10}),
			wc.reply("m", "done", nil, wiretest.Usage{Input: 100, Output: 10}))
		post(t, r.urls[0], nil)
		post(t, r.urls[0], first) // would hang while the claim is held, were it waited for
		if keys := claimKeys(t, r.dsn); slices.Contains(keys, roundClaimKey(claimAnswer, roundKey{1, 2})) {
			t.Errorf("the held answer claim is in the log: %q", keys)
		}
		close(held.release)
		if err := r.pxs[0].Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if keys := claimKeys(t, r.dsn); !slices.Contains(keys, roundClaimKey(claimAnswer, roundKey{1, 2})) {
			t.Errorf("claim log once released: %q; want the answer of turn 1 round 2", keys)
		}
	})
}

// claimKeys returns every key of the claim log, whichever conversation
// (the recorder may not have stored the conversation yet).
func claimKeys(t *testing.T, dsn string) []string {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), "SELECT convert_from(key, 'UTF8') FROM proxy_claims")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// heldAnswers holds back a store's claims of model calls' answers: for
// delay, or until release is closed.
type heldAnswers struct {
	delay   time.Duration
	release chan struct{}
	except  string // a key let through at once
}

// heldStore is a replica's store whose answer claims heldAnswers holds.
type heldStore struct {
	*countingStore
	held *heldAnswers
}

func (s heldStore) Claim(ctx context.Context, conv string, entries []store.Claim) ([]store.Claim, error) {
	for _, e := range entries {
		if strings.HasPrefix(e.Key, claimAnswer+"|") && e.Key != s.held.except {
			if s.held.release != nil {
				<-s.held.release
			}
			time.Sleep(s.held.delay)
			break
		}
	}
	return s.countingStore.Claim(ctx, conv, entries)
}
