package proxy

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
)

// TestCodeAssist: a Code Assist request is read as the Gemini request
// under its "request", its model beside it; its answer as the Gemini
// responses under each event's "response".
func TestCodeAssist(t *testing.T) {
	var wc wireCase
	for _, c := range wireCases {
		if c.name == "gemini-code-assist" {
			wc = c
		}
	}
	body := wc.body("gemini-2.5-pro", "Which version of zod?", []step{{id: "c1", tool: "read_file", args: `{"file_path":"a"}`, result: "zod 3.23.8"}})
	req, err := walkBody(body, wc.format, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := buildHistory(req.Items)
	if req.Model != "gemini-2.5-pro" || len(h.Results) != 1 || h.Results[0].Tool != "read_file" || len(req.System) == 0 || len(req.Tools) == 0 {
		t.Fatalf("model %q, %d results, system %d bytes, tools %d bytes", req.Model, len(h.Results), len(req.System), len(req.Tools))
	}
	if text, _ := h.Results[0].Decode(body); text != "zod 3.23.8" {
		t.Errorf("the result reads %q", text)
	}
	var stream bytes.Buffer
	for _, ev := range wc.reply("gemini-2.5-pro", "", []wiretest.Call{{ID: "c2", Name: "read_file", Args: `{"file_path":"b"}`}}, wiretest.Usage{Input: 40, Output: 5}).Events {
		stream.WriteString(ev.Encode())
	}
	p := wc.format.newReply()
	if _, err := relayEvents(&bytes.Buffer{}, nil, bufio.NewReaderSize(bytes.NewReader(stream.Bytes()), eventBuffer), p); err != nil {
		t.Fatal(err)
	}
	if r := p.reply(); len(r.Calls) != 1 || r.Calls[0].Name != "read_file" || r.Usage.Input != 40 {
		t.Errorf("the answer read as %+v", r)
	}
}
