package tokens

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"testing"

	"github.com/agentharness/harness"
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
	want := RequestOverhead +
		MessageOverhead + 2 + // system (req.System not counted twice)
		MessageOverhead + 4 +
		MessageOverhead + toolCallOverhead + c.Count("c1") + c.Count("read") + 13 +
		MessageOverhead + c.Count("c1") + 2 +
		toolOverhead + c.Count(string(spec))
	if got := CountRequest(c, req); got != want {
		t.Fatalf("CountRequest = %d, want %d", got, want)
	}

	// A system prompt that is not among the messages is counted on its own.
	req2 := &harness.Request{System: "hello world"}
	if got, want := CountRequest(c, req2), RequestOverhead+MessageOverhead+2; got != want {
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
		w, h, want int
	}{
		{512, 512, 85 + 170},     // one tile
		{1024, 1024, 85 + 170*4}, // scaled to 768×768: 2×2 tiles
		{2048, 4096, 85 + 170*6}, // 1024×2048 → 768×1536: 2×3 tiles
		{100, 30, 85 + 170},      // small
		{4000, 1000, 85 + 170*4}, // 2048×512, short side under 768: 4×1 tiles
	} {
		got := ImageTokens(mk(tc.w, tc.h))
		if got != tc.want {
			t.Errorf("%dx%d: %d, want %d", tc.w, tc.h, got, tc.want)
		}
	}
	if ImageTokens([]byte("not an image")) != ImageFallback {
		t.Error("undecodable image not counted as fallback")
	}
}
