package sqlite

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

// FuzzToolSpecStored checks that any tool schema a request sends comes back
// from the store byte for byte with its risk (invalid UTF-8, schemas that
// are not JSON, empty fields), once however often it is sent.
func FuzzToolSpecStored(f *testing.F) {
	f.Add("read_file", "Read a file.", []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`), uint8(harness.ReadOnly), "You code.")
	f.Add("", "", []byte(nil), uint8(0), "")
	f.Add("\xff\xfe", "desc \x00 with NUL", []byte("not json \xfe"), uint8(0xff), "sys \xc3")
	f.Add("a", "b", []byte(" { } "), uint8(harness.Destructive|harness.Network), strings.Repeat("long prompt ", 500))
	ctx := context.Background()
	s := openTemp(f, nil)
	n := 0
	f.Fuzz(func(t *testing.T, name, desc string, schema []byte, risk uint8, system string) {
		n++
		spec := harness.ToolSpec{Name: name, Description: desc, InputSchema: schema, Risk: harness.Risk(risk)}
		other := harness.ToolSpec{Name: "other", Description: desc}
		conv := harness.NewConversation(fmt.Sprintf("c_fuzz_%d", n))
		turn := &harness.Turn{Index: 1, Input: "q"}
		if err := s.BeginTurn(ctx, conv, turn); err != nil {
			t.Fatal(err)
		}
		for round, tools := range [][]harness.ToolSpec{{spec, other}, {spec, other}, {other, spec, spec}} {
			req := &harness.Request{System: system, Tools: tools, Turn: 1, Round: round + 1}
			if err := s.AddRequest(ctx, conv, turn, req); err != nil {
				t.Fatal(err)
			}
			if err := s.AddRound(ctx, conv, turn, &harness.Round{Index: round + 1, Assistant: harness.Message{Role: harness.RoleAssistant}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.EndTurn(ctx, conv, turn); err != nil {
			t.Fatal(err)
		}
		reqs, err := s.Requests(ctx, conv.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := spec
		if len(want.InputSchema) == 0 {
			want.InputSchema = nil // none and empty send the same: nothing
		}
		for i, q := range reqs {
			if q.System != system || q.SystemBytes != len(system) || !q.Recorded {
				t.Fatalf("request %d: system %q (%d bytes), want %q", i, q.System, q.SystemBytes, system)
			}
			at := 0
			if i == 2 {
				at = 1
			}
			if !reflect.DeepEqual(q.Tools[at], want) {
				t.Fatalf("request %d: got %#v, want %#v", i, q.Tools[at], want)
			}
			bytes := 0
			for _, tool := range q.Tools {
				bytes += harness.SchemaBytes(tool)
			}
			if q.ToolBytes != bytes {
				t.Fatalf("request %d: %d tool bytes, the schemas are %d", i, q.ToolBytes, bytes)
			}
		}
		if reqs[0].ToolSet != reqs[1].ToolSet || reqs[0].ToolSet == reqs[2].ToolSet {
			t.Fatalf("tool lists %s %s %s", reqs[0].ToolSet, reqs[1].ToolSet, reqs[2].ToolSet)
		}
	})
}
