package toolselect

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentharness/harness/internal/toolschema"

	"github.com/agentharness/harness"
)

// events collects the events Select emits.
type events struct {
	mu   sync.Mutex
	list []harness.Event
}

func (e *events) ctx() context.Context {
	return harness.WithObserver(context.Background(), func(ev harness.Event) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.list = append(e.list, ev)
	})
}

func (e *events) last(t *testing.T) harness.Event {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.list) == 0 {
		t.Fatal("no event")
	}
	return e.list[len(e.list)-1]
}

func names(specs []harness.ToolSpec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}

func has(specs []harness.ToolSpec, name string) bool {
	for _, s := range specs {
		if s.Name == name {
			return true
		}
	}
	return false
}

func manyTools(n int) []harness.ToolSpec {
	var specs []harness.ToolSpec
	for i := range n {
		specs = append(specs, harness.ToolSpec{Name: fmt.Sprintf("tool_%02d", i), Description: fmt.Sprintf("Tool number %d.", i)})
	}
	return specs
}

func TestUnderThresholdOffersAll(t *testing.T) {
	var ev events
	specs := manyTools(24)
	sel := &Selector{}
	got, err := sel.Select(ev.ctx(), harness.NewConversation("c"), "anything", specs)
	if err != nil || len(got) != 24 {
		t.Fatalf("%d tools, %v", len(got), err)
	}
	if e := ev.last(t); e.Kind != harness.EventPolicy || e.Data["mode"] != "all" {
		t.Errorf("event %+v", e)
	}
	// One more tool and ranking starts.
	got, _ = sel.Select(ev.ctx(), nil, "anything", manyTools(25))
	if len(got) != 20 {
		t.Fatalf("25 tools → %d offered, want 20", len(got))
	}
}

func TestSelectionKeepsOrderAndIsDeterministic(t *testing.T) {
	specs := loadSpecs(t)
	sel := &Selector{}
	var first []string
	for i := range 3 {
		got, err := sel.Select(context.Background(), nil, "Close issue 4512 as fixed", specs)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 20 {
			t.Fatalf("%d tools", len(got))
		}
		// The original order: a stable prompt prefix.
		pos := map[string]int{}
		for j, s := range specs {
			pos[s.Name] = j
		}
		for j := 1; j < len(got); j++ {
			if pos[got[j-1].Name] > pos[got[j].Name] {
				t.Fatalf("order changed: %v", names(got))
			}
		}
		if i == 0 {
			first = names(got)
		} else if strings.Join(first, ",") != strings.Join(names(got), ",") {
			t.Fatal("a second selection differs")
		}
	}
	if !strings.Contains(strings.Join(first, ","), "close_issue") {
		t.Errorf("close_issue not selected: %v", first)
	}
}

// conversationCalling returns a conversation whose tool messages, oldest
// first, called these tools.
func conversationCalling(tools ...string) *harness.Conversation {
	conv := harness.NewConversation("c_keep")
	turn := &harness.Turn{Index: 1, Input: "earlier"}
	for i, name := range tools {
		turn.Rounds = append(turn.Rounds, &harness.Round{Index: i + 1, Results: []*harness.ToolResult{{CallID: fmt.Sprint(i), Tool: name}}})
	}
	conv.Turns = append(conv.Turns, turn, &harness.Turn{Index: 2, Input: "now"})
	return conv
}

func TestMustKeep(t *testing.T) {
	specs := loadSpecs(t)
	// Namespaced identity tools are kept by their base name.
	specs = append(specs,
		harness.ToolSpec{Name: "github__get_current_user", Description: "The GitHub user."},
		harness.ToolSpec{Name: "shell__whoami", Description: "Print the user name."},
		harness.ToolSpec{Name: "audit_log", Description: "Read the audit log."},
	)
	// 13 tool messages: the oldest (get_subscription) is outside the last 12.
	conv := conversationCalling("get_subscription", "list_deals", "list_deals", "get_site_settings", "list_teams",
		"list_teams", "list_teams", "list_teams", "list_teams", "list_teams", "list_teams", "list_teams", "list_teams")
	var ev events
	// Afresh (NoSticky): a kept or settled list would be the earlier turn's.
	sel := &Selector{Pinned: []string{"audit_*"}, NoSticky: true}
	got, err := sel.Select(ev.ctx(), conv, "Close issue 4512 as fixed", specs)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"me", "github__get_current_user", "shell__whoami", "audit_log", "list_deals", "get_site_settings", "list_teams", "close_issue"} {
		if !has(got, want) {
			t.Errorf("%s not kept: %v", want, names(got))
		}
	}
	if has(got, "get_subscription") {
		t.Errorf("get_subscription was called 13 tool messages ago, and is not relevant; kept anyway")
	}
	if len(got) != 20 {
		t.Errorf("%d tools, want 20 (must-keep included)", len(got))
	}
	e := ev.last(t)
	if kept, _ := e.Data["must_keep"].([]string); len(kept) != 7 {
		t.Errorf("must_keep %v", e.Data["must_keep"])
	}
	if e.Conversation != "c_keep" || e.Turn != 2 || e.Data["tools_all"] != 87 || e.Data["tools_offered"] != 20 {
		t.Errorf("event %+v", e)
	}

	// More must-keep tools than TopK: all of them, nothing ranked.
	sel = &Selector{TopK: 3, Pinned: []string{"list_*"}}
	got, _ = sel.Select(context.Background(), nil, "close the bug", specs)
	n := 0
	for _, s := range specs {
		if strings.HasPrefix(s.Name, "list_") {
			n++
		}
	}
	if len(got) != n+3 { // + me, get_current_user, whoami
		t.Errorf("%d tools for %d must-keep", len(got), n+3)
	}
	// Identity turned off.
	sel = &Selector{Identity: []string{}, TopK: 1}
	got, _ = sel.Select(context.Background(), nil, "close the bug", specs)
	if has(got, "me") || len(got) != 1 {
		t.Errorf("identity off: %v", names(got))
	}
}

// hangBound is the only limit these tests put on work that should finish:
// a loaded machine never reaches it, a hang does.
const hangBound = 10 * time.Minute

func TestFallbackToAllTools(t *testing.T) {
	specs := loadSpecs(t)
	// The ranker that ignores its context blocks until the test ends: only
	// the selector's own timeout can return before it.
	release := make(chan struct{})
	defer close(release)
	for _, tc := range []struct {
		name    string
		ranker  Ranker
		timeout time.Duration
		want    string
	}{
		{"error", rankerFunc(func(context.Context, string, []harness.ToolSpec) ([]float64, error) {
			return nil, errors.New("index unavailable")
		}), hangBound, "index unavailable"},
		{"ignores ctx past the timeout", rankerFunc(func(context.Context, string, []harness.ToolSpec) ([]float64, error) {
			<-release
			return make([]float64, 84), nil
		}), 100 * time.Millisecond, "timed out after 100ms"},
		{"wrong length", rankerFunc(func(context.Context, string, []harness.ToolSpec) ([]float64, error) {
			return []float64{1}, nil
		}), hangBound, "1 scores for 84 tools"},
		{"panic", rankerFunc(func(context.Context, string, []harness.ToolSpec) ([]float64, error) {
			panic("bad ranker")
		}), hangBound, "panicked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ev events
			sel := &Selector{Ranker: tc.ranker, Timeout: tc.timeout}
			got, err := sel.Select(ev.ctx(), harness.NewConversation("c"), "close the bug", specs)
			if err != nil || len(got) != len(specs) {
				t.Fatalf("%d tools, %v", len(got), err)
			}
			e := ev.last(t)
			if e.Kind != harness.EventWarning || e.Policy != policyName || !strings.Contains(e.Detail, tc.want) || e.Data["mode"] != "fallback" {
				t.Errorf("event %+v", e)
			}
		})
	}
}

func TestMeasure(t *testing.T) {
	specs := loadSpecs(t)
	m := Measure(specs)
	sum := 0
	for _, s := range specs {
		sum += toolschema.Bytes(s.Name, s.Description, s.InputSchema)
	}
	if m.Tools != 84 || m.Bytes != sum || sum == 0 {
		t.Fatalf("%+v, want %d bytes", m, sum)
	}
}

// TestOffSwitches checks that AlwaysRank and NoRecentTools turn off only
// their own rule, and that the negative values that once meant off are
// refused with a message naming the switch.
func TestOffSwitches(t *testing.T) {
	specs := loadSpecs(t)
	// The conversation's earlier turn called get_subscription; the must-keep
	// rules are checked on a selection made afresh (NoSticky: a kept list
	// would be the earlier turn's).
	conv := conversationCalling("get_subscription")
	cases := []struct {
		name    string
		sel     *Selector
		tools   []harness.ToolSpec
		want    int    // tools offered
		keeps   bool   // get_subscription (called recently, not relevant) offered
		wantErr string // an error from Select
	}{
		{"defaults: few tools offered whole", &Selector{}, manyTools(10), 10, false, ""},
		{"AlwaysRank ranks few tools", &Selector{AlwaysRank: true, TopK: 4, Identity: []string{}}, manyTools(10), 4, false, ""},
		{"defaults keep a recent tool", &Selector{TopK: 4, NoSticky: true}, specs, 4, true, ""},
		{"NoRecentTools keeps none", &Selector{TopK: 4, NoRecentTools: true, NoSticky: true}, specs, 4, false, ""},
		{"negative Threshold", &Selector{Threshold: -1}, specs, 0, false, "Threshold -1 is negative: 0 is the default (24), AlwaysRank"},
		{"negative RecentToolMessages", &Selector{RecentToolMessages: -1}, specs, 0, false, "RecentToolMessages -1 is negative: 0 is the default (12), NoRecentTools"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.sel.Select(context.Background(), conv, "Close issue 4512 as fixed", c.tools)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != c.want {
				t.Errorf("%d tools offered, want %d: %v", len(got), c.want, names(got))
			}
			if c.tools[0].Name != "tool_00" && has(got, "get_subscription") != c.keeps {
				t.Errorf("get_subscription offered %v, want %v: %v", has(got, "get_subscription"), c.keeps, names(got))
			}
		})
	}
}

// TestLiteral: a Literal pattern pins its tool and no other, whatever
// pattern characters the name holds.
func TestLiteral(t *testing.T) {
	for _, tc := range []struct {
		name, other string
	}{
		{"odd[name]*", "oddnname]x"},
		{"get?sum", "get-sum"},
		{`back\slash`, "backslash"},
		{"mcp__everything__get-sum", "mcp__everything__get-sums"},
	} {
		p := Literal(tc.name)
		if ok, _ := path.Match(p, tc.name); !ok {
			t.Errorf("Literal(%q) = %q does not match its own name", tc.name, p)
		}
		if ok, _ := path.Match(p, tc.other); ok {
			t.Errorf("Literal(%q) = %q matches %q", tc.name, p, tc.other)
		}
	}
}
