// Package scripted provides a [harness.Model] that plays a script: a fixed
// sequence of model steps (text and/or tool calls) with optional
// expectations on the request each step receives. It drives tests and the
// demo, and it fails with a clear message when the conversation departs from
// the script.
//
// A script is JSON:
//
//	{
//	  "description": "what the script shows",
//	  "steps": [
//	    {"expect": {"turn": 1, "tools_include": ["read_file"], "contains": ["go.sum"]},
//	     "text": "Let me read it.",
//	     "tool_calls": [{"name": "read_file", "args": {"path": "go.sum"}}]},
//	    {"expect": {"final": true}, "text": "The module needs Go 1.26."}
//	  ]
//	}
//
// When a step gives no usage, the model reports usage computed from the
// request with its Counter: Input counts the request, Cached the part of it
// that is a byte-identical prefix of the previous request (what a provider's
// prompt cache would serve), and Output the reply.
package scripted
