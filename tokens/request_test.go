package tokens

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/promptunit"
	"github.com/agentharness/harness/provider/catalog"
)

func TestCountRequest(t *testing.T) {
	c := mustO200k(t)
	req := &harness.Request{
		System: "hello world",
		Messages: []harness.Message{
			{Role: harness.RoleSystem, Parts: []harness.Part{harness.TextPart("hello world")}},
			{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart("Hello, world!")}},
			{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: "c1", Name: "read", Args: json.RawMessage(`{"path":"/etc/hosts","n":12345}`)}}},
			{Role: harness.RoleTool, ToolCallID: "c1", ToolName: "read", Parts: []harness.Part{harness.TextPart("hello world")}},
		},
		Tools: []harness.ToolSpec{{Name: "read", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object"}`)}},
	}
	spec, _ := json.Marshal(req.Tools[0])
	want := promptunit.RequestOverhead +
		promptunit.MessageOverhead + 2 + // system (req.System not counted twice)
		promptunit.MessageOverhead + 4 +
		promptunit.MessageOverhead + toolCallOverhead + c.Count("c1") + c.Count("read") + 13 +
		promptunit.MessageOverhead + c.Count("c1") + 2 +
		toolOverhead + c.Count(string(spec))
	if got := CountRequest(c, req); got != want {
		t.Fatalf("CountRequest = %d, want %d", got, want)
	}

	// A system prompt that is not among the messages is counted on its own.
	req2 := &harness.Request{System: "hello world"}
	if got, want := CountRequest(c, req2), promptunit.RequestOverhead+promptunit.MessageOverhead+2; got != want {
		t.Fatalf("system only = %d, want %d", got, want)
	}
	if CountRequest(c, nil) != 0 {
		t.Fatal("nil request counted")
	}
}

func TestImageTokens(t *testing.T) {
	mk := func(w, h int) []byte {
		var buf bytes.Buffer
		if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	for _, tc := range []struct {
		rule       catalog.ImageRule
		w, h, want int
	}{
		{catalog.ImageOpenAI, 512, 512, 85 + 170},     // one tile
		{catalog.ImageOpenAI, 1024, 1024, 85 + 170*4}, // scaled to 768×768: 2×2 tiles
		{catalog.ImageOpenAI, 2048, 4096, 85 + 170*6}, // 1024×2048 → 768×1536: 2×3 tiles
		{catalog.ImageOpenAI, 100, 30, 85 + 170},      // small
		{catalog.ImageOpenAI, 4000, 1000, 85 + 170*4}, // 2048×512, short side under 768: 4×1 tiles
		{catalog.ImageAnthropic, 1000, 1000, 1334},
		{catalog.ImageGemini, 1000, 1000, 258 * 4},
	} {
		got := imageTokens(tc.rule, mk(tc.w, tc.h))
		if got != tc.want {
			t.Errorf("%s %dx%d: %d, want %d", tc.rule, tc.w, tc.h, got, tc.want)
		}
	}
	if got := imageTokens(catalog.ImageOpenAI, []byte("not an image")); got != 765 {
		t.Errorf("undecodable image counted %d, want 765 (1024×1024)", got)
	}
	// The rule travels with the counter; the bytes of the image never count.
	c := CounterFunc(func(s string) int { return len(s) })
	parts := []harness.Part{harness.ImagePart("image/png", mk(1000, 1000))}
	for rule, want := range map[catalog.ImageRule]int{"": 765, catalog.ImageAnthropic: 1334, catalog.ImageGemini: 1032} {
		cc := Counter(c)
		if rule != "" {
			cc = WithImageRule(WithImageRule(c, catalog.ImageGemini), rule)
		}
		if got := CountParts(cc, parts); got != want {
			t.Errorf("CountParts under %q = %d, want %d", rule, got, want)
		}
	}
}
