package benchcore

import (
	"bytes"
	"testing"
)

// FuzzChatRequest checks that any body parseChatRequest reads encodes to
// a body that reads back to the same request, byte for byte once encoded.
func FuzzChatRequest(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"}]}`))
	f.Add([]byte(`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},{"role":"tool","tool_call_id":"c1","content":"a\nb"}],"tools":[{"type":"function","function":{"name":"bash","description":"d","parameters":{"type":"object"}}}]}`))
	f.Add([]byte(`{"messages":[{"role":"developer","content":[{"type":"text","text":"x"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]}]}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://example.invalid/a.png"}}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		msgs, tools, err := parseChatRequest(body)
		if err != nil {
			return
		}
		once, err := chatRequestBody("m", msgs, tools)
		if err != nil {
			return // a schema that is not JSON cannot be re-encoded
		}
		msgs2, tools2, err := parseChatRequest(once)
		if err != nil {
			t.Fatalf("re-reading %s: %v", once, err)
		}
		twice, err := chatRequestBody("m", msgs2, tools2)
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("not stable:\n%s\n%s (%v)", once, twice, err)
		}
	})
}
