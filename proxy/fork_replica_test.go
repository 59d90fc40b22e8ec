package proxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentharness/harness/store/postgres"
)

// TestReplicasAgreeOnForks: a client's requests alternate between two
// replicas on one PostgreSQL while its history forks (the client rewinds
// and goes on another way, on one replica, and continues on the other).
// The store holds each branch once, with every round, as one proxy stores
// them; every tool result goes upstream with the bytes it went with
// before, on either replica and in either branch (the results are cut,
// so a result decided twice would show); no replica warns.
func TestReplicasAgreeOnForks(t *testing.T) {
	big := func(id string) step { return bash(id, lockFile(30<<10)+"\n"+id+"\n") }
	four := []scriptTurn{
		{prompt: "t1", answer: "r1", steps: []step{big("c1"), big("c1b")}},
		{prompt: "t2", answer: "r2", steps: []step{big("c2")}},
		{prompt: "t3", answer: "r3", steps: []step{big("c3")}},
		{prompt: "t4", answer: "r4", steps: []step{big("c4")}},
	}
	rewound := []scriptTurn{four[0],
		{prompt: "t2, but another way", answer: "r2'", steps: []step{big("d2")}},
		{prompt: "t3'", answer: "r3'", steps: []step{big("d3")}},
	}
	br1 := []scriptTurn{{prompt: "go", answer: "1", steps: []step{big("a1"), big("a2")}}}
	br2 := []scriptTurn{{prompt: "go", answer: "2", steps: []step{big("a1"), big("b2"), big("b3")}}}
	br3 := []scriptTurn{{prompt: "go", answer: "3", steps: []step{big("a1"), big("b2"), big("c3")}}}
	for _, tc := range []struct {
		name  string
		runs  [][]scriptTurn
		plays []play
		want  []string
	}{
		{"rewind to turn 2 of 4", [][]scriptTurn{four, rewound}, []play{{run: 0}, {1, 3, 0}},
			[]string{"t1 [c1 c1b] =r1 / t2 [c2] =r2 / t3 [c3] =r3 / t4 [c4] =r4", "t1 [c1 c1b] =r1 / t2, but another way [d2] =r2' / t3' [d3] =r3'"}},
		{"a branch diverging again forks again", [][]scriptTurn{br1, br2, br3}, []play{{run: 0}, {1, 1, 0}, {2, 2, 0}},
			[]string{"go [a1 a2] =1", "go [a1 b2 b3] =2", "go [a1 b2 c3] =3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newReplicaRig(t, 2, true)
			n := 0
			for _, pl := range tc.plays {
				ex := anthropicClient.exchanges(tc.runs[pl.run])
				to := pl.to
				if to == 0 {
					to = len(ex)
				}
				for i := pl.from; i < to; i++ {
					r.up.Enqueue(ex[i].reply)
					resp, err := postTo(r.urls[n%2]+anthropicClient.path, ex[i].body)
					if err != nil || resp != 200 {
						t.Fatalf("run %d exchange %d on replica %d: status %d (%v)", pl.run, i, n%2, resp, err)
					}
					n++
				}
			}
			for _, px := range r.pxs {
				if err := px.Flush(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			st, err := postgres.Open(context.Background(), r.dsn, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if got := storedConvs(t, st); !slices.Equal(got, tc.want) {
				t.Errorf("stored:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
			sentAs := map[string]string{}
			cut := 0
			for i, sent := range toolResultsSent(t, r.up.Requests()) {
				for id, content := range sent {
					if len(content) < 30<<10 {
						cut++
					}
					if before, ok := sentAs[id]; ok && before != content {
						t.Errorf("request %d sent %s with other bytes than before (%d vs %d bytes)", i+1, id, len(content), len(before))
					}
					sentAs[id] = content
				}
			}
			if cut == 0 {
				t.Fatalf("no result was cut: the test shows nothing")
			}
			for i, l := range r.logs {
				if s := l.String(); strings.Contains(s, "warning") || strings.Contains(s, "recording:") {
					t.Errorf("replica %d:\n%s", i, s)
				}
				if s := r.pxs[i].Stats(); s.RecordErrors != 0 {
					t.Errorf("replica %d: %d record errors", i, s.RecordErrors)
				}
			}
		})
	}
}

// postTo posts a body and returns the status, the answer read through.
func postTo(url string, body []byte) (int, error) {
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}
