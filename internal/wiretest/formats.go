package wiretest

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
)

// Call is a tool call a scripted answer makes; Args is its arguments
// object as JSON.
type Call struct {
	ID, Name, Args string
	// Namespace, in a Responses answer, is the function_call's
	// "namespace" (Codex offers an MCP server's tools in a namespace
	// tool and reads a call of one by it); "" leaves it out.
	Namespace string
}

// Usage is what a scripted answer reports.
type Usage struct {
	Input, Cached, Output int
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the values below always marshal
	}
	return string(b)
}

// AnthropicStream is a Messages API answer as a server-sent event stream:
// message_start, one text block (when text is set), one tool_use block per
// call (input sent as one input_json_delta), message_delta and
// message_stop. Input usage is reported Anthropic's way: input_tokens
// excludes the cache reads.
func AnthropicStream(model, text string, calls []Call, u Usage) Reply {
	stop := "end_turn"
	if len(calls) > 0 {
		stop = "tool_use"
	}
	// Clients merge streamed messages by id, so each answer gets its own.
	id := fmt.Sprintf("msg_wiretest_%08x", crc32.ChecksumIEEE([]byte(js([]any{text, calls}))))
	evs := []Event{{"message_start", js(map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": u.Input - u.Cached, "cache_read_input_tokens": u.Cached, "cache_creation_input_tokens": 0, "output_tokens": 1}}})}}
	idx := 0
	block := func(start map[string]any, delta map[string]any) {
		evs = append(evs,
			Event{"content_block_start", js(map[string]any{"type": "content_block_start", "index": idx, "content_block": start})},
			Event{"content_block_delta", js(map[string]any{"type": "content_block_delta", "index": idx, "delta": delta})},
			Event{"content_block_stop", js(map[string]any{"type": "content_block_stop", "index": idx})})
		idx++
	}
	if text != "" {
		block(map[string]any{"type": "text", "text": ""}, map[string]any{"type": "text_delta", "text": text})
	}
	for _, c := range calls {
		block(map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}},
			map[string]any{"type": "input_json_delta", "partial_json": c.Args})
	}
	evs = append(evs,
		Event{"message_delta", js(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": u.Output}})},
		Event{"message_stop", `{"type":"message_stop"}`})
	return Stream(evs...)
}

// ResponsesStream is a Responses API answer as a server-sent event
// stream: response.created, each output item added, its deltas and done,
// then response.completed with the whole output and the usage.
func ResponsesStream(model, text string, calls []Call, u Usage) Reply {
	var evs []Event
	seq := 0
	add := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		evs = append(evs, Event{typ, js(fields)})
	}
	resp := func(status string, output []any) map[string]any {
		r := map[string]any{"id": "resp_wiretest", "object": "response", "created_at": 0, "model": model, "status": status, "output": output}
		if status == "completed" {
			r["usage"] = map[string]any{"input_tokens": u.Input, "input_tokens_details": map[string]any{"cached_tokens": u.Cached},
				"output_tokens": u.Output, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": u.Input + u.Output}
		}
		return r
	}
	add("response.created", map[string]any{"response": resp("in_progress", []any{})})
	var output []any
	if text != "" {
		id := "msg_wiretest"
		add("response.output_item.added", map[string]any{"output_index": len(output), "item": map[string]any{"type": "message", "id": id, "role": "assistant", "status": "in_progress", "content": []any{}}})
		add("response.output_text.delta", map[string]any{"item_id": id, "output_index": len(output), "content_index": 0, "delta": text})
		item := map[string]any{"type": "message", "id": id, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
		add("response.output_item.done", map[string]any{"output_index": len(output), "item": item})
		output = append(output, item)
	}
	for i, c := range calls {
		id := fmt.Sprintf("fc_wiretest_%d", i)
		add("response.output_item.added", map[string]any{"output_index": len(output), "item": map[string]any{"type": "function_call", "id": id, "call_id": c.ID, "name": c.Name, "arguments": "", "status": "in_progress"}})
		add("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": len(output), "delta": c.Args})
		item := map[string]any{"type": "function_call", "id": id, "call_id": c.ID, "name": c.Name, "arguments": c.Args, "status": "completed"}
		if c.Namespace != "" {
			item["namespace"] = c.Namespace
		}
		add("response.output_item.done", map[string]any{"output_index": len(output), "item": item})
		output = append(output, item)
	}
	add("response.completed", map[string]any{"response": resp("completed", output)})
	return Stream(evs...)
}

// ChatStream is a Chat Completions answer as a stream of chunks: the
// text, each call, the finish reason, a usage chunk and [DONE].
func ChatStream(model, text string, calls []Call, u Usage) Reply {
	chunk := func(delta map[string]any, finish any) Event {
		return Event{"", js(map[string]any{"id": "chatcmpl-wiretest", "object": "chat.completion.chunk", "created": 0, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})}
	}
	evs := []Event{chunk(map[string]any{"role": "assistant", "content": text}, nil)}
	for i, c := range calls {
		evs = append(evs, chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": c.Args}}}}, nil))
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	evs = append(evs, chunk(map[string]any{}, finish),
		Event{"", js(map[string]any{"id": "chatcmpl-wiretest", "object": "chat.completion.chunk", "created": 0, "model": model, "choices": []any{},
			"usage": map[string]any{"prompt_tokens": u.Input, "completion_tokens": u.Output, "total_tokens": u.Input + u.Output,
				"prompt_tokens_details": map[string]any{"cached_tokens": u.Cached}}})},
		Event{"", "[DONE]"})
	return Stream(evs...)
}

// GeminiStream is a Gemini answer as a server-sent event stream
// (alt=sse): one chunk with the text and the function calls, the finish
// reason and the usage metadata.
func GeminiStream(model, text string, calls []Call, u Usage) Reply {
	var parts []any
	if text != "" {
		parts = append(parts, map[string]any{"text": text})
	}
	for _, c := range calls {
		fc := map[string]any{"name": c.Name, "args": json.RawMessage(c.Args)}
		if c.ID != "" {
			fc["id"] = c.ID
		}
		parts = append(parts, map[string]any{"functionCall": fc})
	}
	return Stream(Event{"", js(map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": u.Input, "cachedContentTokenCount": u.Cached, "candidatesTokenCount": u.Output, "totalTokenCount": u.Input + u.Output},
		"modelVersion":  model})})
}
