package toolselect

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentharness/harness/internal/toolschema"

	"github.com/agentharness/harness"
)

func TestStub(t *testing.T) {
	long := strings.Repeat("word ", 40)
	cases := []struct {
		name, desc, schema string
		wantDesc, want     string
	}{
		{"first sentence", "Lists the issues of a repository. Pages of 30; filters by label.", `{"type":"object","properties":{"repo":{"type":"string","description":"owner/name"},"labels":{"type":"array","items":{"type":"string"}},"page":{"type":["integer","null"]}},"required":["repo","gone"]}`,
			"Lists the issues of a repository.", `{"type":"object","properties":{"repo":{"type":"string"},"labels":{"type":"array"},"page":{"type":["integer","null"]}},"required":["repo"]}`},
		{"line break", "Reads a file\nwith more text", `{"type":"object","properties":{"z":{},"a":{"enum":[1,2]}}}`, "Reads a file", `{"type":"object","properties":{"z":{},"a":{}}}`},
		{"no schema", "Says hello.", ``, "Says hello.", `{"type":"object"}`},
		{"broken schema", "x", `{"properties":`, "x", `{"type":"object"}`},
		{"long", long, `{"type":"object","properties":{}}`, strings.TrimSpace(long[:119]) + "…", `{"type":"object"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := harness.ToolSpec{Name: "t", Description: c.desc, InputSchema: json.RawMessage(c.schema), Risk: harness.ReadOnly}
			got := Stub(spec)
			if got.Name != "t" || got.Risk != harness.ReadOnly {
				t.Errorf("name %q risk %v: the stub must keep the tool's name and risk", got.Name, got.Risk)
			}
			if got.Description != c.wantDesc {
				t.Errorf("description %q, want %q", got.Description, c.wantDesc)
			}
			if string(got.InputSchema) != c.want {
				t.Errorf("schema %s, want %s", got.InputSchema, c.want)
			}
			if again := Stub(spec); !reflect.DeepEqual(again, got) {
				t.Errorf("a second stub differs: %+v vs %+v", again, got)
			}
		})
	}
}

// FuzzStub: a stub is valid JSON whatever the schema, never longer than the
// spec it shortens by more than its fixed framing, and its description is
// valid UTF-8 of at most 120 runes.
func FuzzStub(f *testing.F) {
	f.Add("Reads a file. More.", `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)
	f.Add("x\ny", `{"properties":{"a":{"type":[1]}}}`)
	f.Add(strings.Repeat("é", 300), `[]`)
	f.Add("", `{"properties":{"\u0000":{"type":"string"}}}`)
	f.Fuzz(func(t *testing.T, desc, schema string) {
		got := Stub(harness.ToolSpec{Name: "t", Description: desc, InputSchema: json.RawMessage(schema)})
		if !json.Valid(got.InputSchema) {
			t.Fatalf("stub schema %q is not JSON", got.InputSchema)
		}
		var obj map[string]any
		if err := json.Unmarshal(got.InputSchema, &obj); err != nil || obj["type"] != "object" {
			t.Fatalf("stub schema %s is not an object schema", got.InputSchema)
		}
		if utf8.ValidString(desc) && (!utf8.ValidString(got.Description) || utf8.RuneCountInString(got.Description) > 120) {
			t.Fatalf("description %q: invalid or over 120 runes", got.Description)
		}
	})
}

// TestDeferKeepsTheList: a deferring selector offers every tool on every
// turn, the first turn's selection whole and the rest as stubs, and the
// list is the same bytes on every turn, whatever the subject.
func TestDeferKeepsTheList(t *testing.T) {
	specs := loadSpecs(t)
	inputs := []string{
		"Which of my published posts haven't mentioned the dark mode feature yet?",
		"Refund the last invoice of customer 4411",
		"Schedule a meeting with the design team next Tuesday",
	}
	sel := &Selector{Defer: true}
	var ev events
	conv := harness.NewConversation("c")
	var first []byte
	for i, in := range inputs {
		conv.Turns = append(conv.Turns, &harness.Turn{Index: i + 1, Input: in})
		got, err := sel.Select(ev.ctx(), conv, in, specs)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(specs) {
			t.Fatalf("turn %d: %d tools offered, want all %d", i+1, len(got), len(specs))
		}
		whole := 0
		for j, g := range got {
			switch {
			case g.Name != specs[j].Name:
				t.Fatalf("turn %d: tool %d is %s, want %s (the original order)", i+1, j, g.Name, specs[j].Name)
			case reflect.DeepEqual(g, specs[j]):
				whole++
			case !reflect.DeepEqual(g, Stub(specs[j])):
				t.Fatalf("turn %d: %s is neither whole nor its stub", i+1, g.Name)
			}
		}
		if whole != DefaultTopK {
			t.Errorf("turn %d: %d tools whole, want the first turn's %d", i+1, whole, DefaultTopK)
		}
		b, _ := json.Marshal(got)
		if first == nil {
			first = b
		} else if string(b) != string(first) {
			t.Errorf("turn %d: the list changed; a deferring selector must keep the first turn's bytes", i+1)
		}
		e := ev.last(t)
		want := map[bool]string{true: "ranked", false: "deferred"}[i == 0]
		if e.Data["mode"] != want || e.Data["deferred"] != len(specs)-DefaultTopK {
			t.Errorf("turn %d: event data %v, want mode %s and %d deferred", i+1, e.Data, want, len(specs)-DefaultTopK)
		}
		if i == 0 && !strings.Contains(e.Detail, fmt.Sprintf("%d as stubs", len(specs)-DefaultTopK)) {
			t.Errorf("event %q does not say how many tools are stubs", e.Detail)
		}
	}
	all, stubbed := Measure(specs), Measure(mustSelect(t, sel, conv, specs))
	if stubbed.Bytes >= all.Bytes {
		t.Errorf("the deferred list is %d of %d schema bytes: stubs must be shorter than the schemas", stubbed.Bytes, all.Bytes)
	}
	for _, s := range specs {
		if st := Stub(s); toolschema.Bytes(st.Name, st.Description, st.InputSchema) > toolschema.Bytes(s.Name, s.Description, s.InputSchema) {
			t.Errorf("%s: stub of %d bytes, the tool %d", s.Name, toolschema.Bytes(st.Name, st.Description, st.InputSchema), toolschema.Bytes(s.Name, s.Description, s.InputSchema))
		}
	}
	t.Logf("deferred list: %d of %d schema bytes", stubbed.Bytes, all.Bytes)
}

func mustSelect(t *testing.T, s *Selector, conv *harness.Conversation, specs []harness.ToolSpec) []harness.ToolSpec {
	t.Helper()
	got, err := s.Select(t.Context(), conv, conv.Turns[len(conv.Turns)-1].Input, specs)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
