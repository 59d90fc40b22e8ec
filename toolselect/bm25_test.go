package toolselect

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/agentharness/harness"
)

func TestBM25ParametersAndReindex(t *testing.T) {
	specs := []harness.ToolSpec{
		{Name: "list_invoices", Description: "List invoices.", InputSchema: json.RawMessage(`{"type":"object","properties":{"status":{"type":"string","enum":["paid","overdue"]}}}`)},
		{Name: "send_email", Description: "Send an email."},
		{Name: "get_weather", Description: "Weather for a city.", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"city name, such as Lisbon"}}}`)},
	}
	r := &BM25{}
	ctx := context.Background()
	// Enum values and parameter descriptions are searched.
	s, _ := r.Rank(ctx, "which bills are overdue", specs)
	if !(s[0] > s[1] && s[0] > s[2]) {
		t.Errorf("enum value: %v", s)
	}
	s, _ = r.Rank(ctx, "forecast for Lisbon", specs)
	if !(s[2] > s[0] && s[2] > s[1]) {
		t.Errorf("parameter description: %v", s)
	}
	// A changed tool set is indexed again.
	specs[1].Description = "Send an email about the forecast in Lisbon, twice: Lisbon."
	s2, _ := r.Rank(ctx, "forecast for Lisbon", specs)
	if s2[1] == 0 {
		t.Errorf("the new description was not indexed: %v", s2)
	}
	for _, v := range s2 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("score %v", v)
		}
	}
	// Cancelled context.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.Rank(cctx, "x", specs); err == nil {
		t.Error("cancelled: no error")
	}
	// No tools, or an empty query.
	if s, err := r.Rank(ctx, "x", nil); err != nil || len(s) != 0 {
		t.Errorf("no tools: %v %v", s, err)
	}
	if s, _ := r.Rank(ctx, "", specs); s[0] != 0 || s[1] != 0 || s[2] != 0 {
		t.Errorf("empty query: %v", s)
	}
}

// FuzzBM25Schema: any input schema and query rank without a panic, with
// finite scores, one per tool.
func FuzzBM25Schema(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"string","description":"the a"}}}`, "a")
	f.Add(`{"properties":{"x":{"items":{"properties":{"y":{"enum":["deep"]}}}}}}`, "deep")
	f.Add(`{"anyOf":[{"properties":{"p":{}}}]}`, "p")
	f.Add(`not json`, "")
	f.Add(`[]`, "list")
	f.Fuzz(func(t *testing.T, schema, query string) {
		specs := []harness.ToolSpec{{Name: "t1", Description: "first", InputSchema: json.RawMessage(schema)}, {Name: "t2"}}
		s, err := (&BM25{}).Rank(context.Background(), query, specs)
		if err != nil || len(s) != 2 {
			t.Fatalf("%v %v", s, err)
		}
		for _, v := range s {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("score %v", v)
			}
		}
	})
}
