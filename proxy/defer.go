package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/agentharness/harness/internal/toolschema"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/toolselect"
)

// Deferred tools (Options.DeferTools). The real clients send every MCP
// tool's whole schema on every request (measured: TestProxy*MCPTools in
// cmd/harness). With DeferTools the proxy offers the MCP tools the
// conversation's first user prompt does not select as toolselect.Stub —
// name, first sentence, top-level parameters — the way the engine's
// deferring selector does (toolselect.Selector.Defer with the client's
// own tools pinned). The choice is a function of the client's tools
// array and the first prompt alone, both the same in every request of a
// conversation, so every request gets the same tools bytes and the
// prompt cache holds; a restarted proxy makes the same choice. A tool the
// client names as its own is never touched, and a client that defers
// tools itself (defer_loading, a tool-search tool) is left alone.

// offeredTool is one function tool of a request's tools array.
type offeredTool struct {
	// spec is the tool as the client sent it, named as a call of it is
	// (a Responses namespace's tools as NAMESPACE__tool).
	spec harness.ToolSpec
	// mcp is set for a tool an MCP server adds, by the client's naming
	// rule; only those are ever stubbed.
	mcp bool
	// desc and schema are the spans of the description and the input
	// schema values, the bytes a stub replaces; desc is empty when the
	// tool has no description.
	desc, schema span
}

// toolLister is a wire format whose tools array the proxy can defer.
type toolLister interface {
	// offeredTools reads the tools array at s, telling the MCP tools by
	// rule; defers is set when the client already defers tools itself.
	offeredTools(body []byte, s span, rule mcpRule) (tools []offeredTool, defers bool, err error)
}

// mcpRule is how a request's tools array tells the tools an MCP server
// adds from the client's own. A tool no rule matches stays whole.
type mcpRule int

const (
	// prefixRule: a name the client gives MCP tools alone — Claude
	// Code's mcp__SERVER__TOOL, Codex's namespace mcp__SERVER, Gemini
	// CLI's mcp_SERVER_TOOL.
	prefixRule mcpRule = iota
	// opencodeRule: opencode's SERVER_TOOL, which its own tools'
	// names can have too (apply_patch, list_mcp_resources), told apart
	// by the schema its MCP adapter gives (opencodeMCP).
	opencodeRule
)

// requestRule returns the rule for a request by the client that sent
// it. opencode names itself in its User-Agent ("opencode/1.18.33
// ai-sdk/provider-utils/4.0.46 runtime/bun/1.3.14", on Messages,
// Responses and Chat Completions alike but for the version); its
// rule is applied to its requests only, so that another client's tool
// named SERVER_TOOL is never taken for an MCP tool, and the prefix rules
// to the others only, so that no opencode tool is taken by a prefix.
func requestRule(h http.Header) mcpRule {
	if strings.HasPrefix(h.Get("User-Agent"), "opencode/") {
		return opencodeRule
	}
	return prefixRule
}

// opencodeNameRE is the name opencode gives an MCP server's tool: the
// server's name and the tool's, each with every character but
// [A-Za-z0-9_-] made "_", joined by "_" (opencode 1.18.33's MCP module).
var opencodeNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]+_[A-Za-z0-9_-]+$`)

// opencodeOwnClosed are opencode's own tools whose schema is closed as an
// MCP tool's is: the MCP module's resource tools, offered beside the
// servers' tools.
var opencodeOwnClosed = []string{"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"}

// opencodeMCP reports whether a tool of an opencode request is an MCP
// server's. opencode's MCP adapter closes every server tool's schema
// ({...inputSchema, type: "object", additionalProperties: false}), which
// its other tools' schemas, made from its Schema definitions, leave open
// (measured on every tool opencode run offers, the optional lsp and
// websearch included: TestProxyOpencodeMCPTools); a name alone cannot
// tell everything_get-sum from apply_patch.
func opencodeMCP(body []byte, name string, schema span) bool {
	if !opencodeNameRE.MatchString(name) || slices.Contains(opencodeOwnClosed, name) || kind(body, schema) != '{' {
		return false
	}
	fs, err := objectFields(body, schema)
	if err != nil {
		return false
	}
	ap, ok := get(fs, "additionalProperties")
	return ok && kind(body, ap) == 'f'
}

// functionMCP reports whether a function tool outside any namespace is
// an MCP server's by rule r: a name starting with prefix, the format's
// MCP prefix, under prefixRule.
func (r mcpRule) functionMCP(body []byte, name string, schema span, prefix string) bool {
	if r == opencodeRule {
		return opencodeMCP(body, name, schema)
	}
	return strings.HasPrefix(name, prefix)
}

// deferred is what deferring did to one request's tools.
type deferred struct {
	edits []edit
	// stubbed holds the full spec of each tool offered as a stub, by the
	// name a call of it carries.
	stubbed map[string]harness.ToolSpec
	// stubs holds the stub sent in place of each, by the same name: what
	// the store records as offered (harness.Request.Tools is the tool
	// schemas sent).
	stubs map[string]harness.ToolSpec
	// bytesIn and bytesOut size the tools array as received and as sent.
	bytesIn, bytesOut int
}

// deferTools returns the edits that offer c's unselected MCP tools as
// stubs, or nothing when DeferTools is off, the format has no tools array
// the proxy reads, or the client defers tools itself.
func (p *Proxy) deferTools(ctx context.Context, c *call) deferred {
	lister, ok := c.format.(toolLister)
	if !p.opts.DeferTools || !ok || c.req.toolsAt.End <= c.req.toolsAt.Start {
		return deferred{}
	}
	tools, defers, err := lister.offeredTools(c.in, c.req.toolsAt, c.rule)
	if err != nil || defers || !slices.ContainsFunc(tools, func(t offeredTool) bool { return t.mcp }) {
		return deferred{}
	}
	specs := make([]harness.ToolSpec, len(tools))
	var pinned []string
	for i, t := range tools {
		specs[i] = t.spec
		if !t.mcp {
			pinned = append(pinned, toolselect.Literal(t.spec.Name))
		}
	}
	first := ""
	if len(c.hist.Turns) > 0 {
		first = c.hist.Turns[0].Input
	}
	sel := &toolselect.Selector{Defer: true, Pinned: pinned, Ranker: p.ranker}
	offered, err := sel.Select(ctx, nil, first, specs)
	if err != nil || len(offered) != len(specs) {
		return deferred{}
	}
	d := deferred{stubbed: map[string]harness.ToolSpec{}, stubs: map[string]harness.ToolSpec{}, bytesIn: c.req.toolsAt.End - c.req.toolsAt.Start}
	d.bytesOut = d.bytesIn
	for i, t := range tools {
		if !t.mcp || !toolselect.Shortened(offered[i], specs[i]) {
			continue
		}
		d.stubbed[t.spec.Name], d.stubs[t.spec.Name] = t.spec, offered[i]
		if t.desc.End > t.desc.Start {
			d.edits = append(d.edits, edit{Span: t.desc, New: encodeString(offered[i].Description)})
		}
		d.edits = append(d.edits, edit{Span: t.schema, New: offered[i].InputSchema})
	}
	// splice wants edits in body order; a tool may hold its schema
	// before its description.
	slices.SortFunc(d.edits, func(a, b edit) int { return a.Span.Start - b.Span.Start })
	for _, e := range d.edits {
		d.bytesOut += len(e.New) - (e.Span.End - e.Span.Start)
	}
	return d
}

// argumentErrorMarkers are what a result says when a call's arguments did
// not fit the tool's schema: JSON-RPC's invalid-params code, which an MCP
// server answers a bad argument with (Claude Code and Codex relay it as
// "MCP error -32602: …"), and Claude Code's own check.
var argumentErrorMarkers = []string{"-32602", "InputValidationError"}

// geminiParamsRE is Gemini CLI's own check of a call's arguments against
// the schema (Ajv's wording: "params must have required property 'b'",
// "params/a must be number").
var geminiParamsRE = regexp.MustCompile(`(?m)^params(/\S*)? must `)

// argumentError reports whether a result's text says the call's arguments
// did not fit the tool's schema.
func argumentError(text string) bool {
	for _, m := range argumentErrorMarkers {
		if strings.Contains(text, m) {
			return true
		}
	}
	return geminiParamsRE.MatchString(text)
}

// sent returns tools, the tools array as the client sent it, as the proxy
// sent it: each stubbed tool's description and schema the stub's. tools
// is not changed (the conversation caches it).
func (d deferred) sent(tools []harness.ToolSpec) []harness.ToolSpec {
	if len(d.stubs) == 0 {
		return tools
	}
	out := slices.Clone(tools)
	for i, t := range out {
		if st, ok := d.stubs[t.Name]; ok {
			out[i].Description, out[i].InputSchema = st.Description, st.InputSchema
		}
	}
	return out
}

// schemaNote returns the text to append to a result that answers a call
// of a stubbed tool whose arguments did not fit, or "": the full input
// schema, worded as the engine's argument check words it
// (toolschema.Note). A format whose results carry an error flag
// must have it set.
func (d deferred) schemaNote(r *wireResult, text string) string {
	spec, ok := d.stubbed[r.Tool]
	if !ok || (!r.IsError && !r.NoErrorFlag) || !argumentError(text) {
		return ""
	}
	var c bytes.Buffer
	if json.Compact(&c, spec.InputSchema) != nil {
		return ""
	}
	return "\n\n" + toolschema.Note(toolschema.ShortForm, c.Bytes())
}

// offeredTools reads a Messages tools array: each tool with a name and
// an input_schema; Claude Code names an MCP server's tools
// mcp__SERVER__TOOL, opencode SERVER_TOOL (rule). A tool marked
// defer_loading, a tool-search tool (tool_search_tool_*) or Claude Code's
// own ToolSearch means the client defers. A strict tool is never stubbed.
func (anthropicFormat) offeredTools(body []byte, s span, rule mcpRule) ([]offeredTool, bool, error) {
	elems, err := arrayElems(body, s)
	if err != nil {
		return nil, false, err
	}
	var out []offeredTool
	for _, e := range elems {
		fs, err := objectFields(body, e)
		if err != nil {
			return nil, false, err
		}
		name, typ := fieldStr(body, fs, "name"), fieldStr(body, fs, "type")
		if boolField(body, fs, "defer_loading") || strings.HasPrefix(typ, "tool_search_tool") || name == "ToolSearch" {
			return nil, true, nil
		}
		schema, ok := get(fs, "input_schema")
		if !ok || (typ != "" && typ != "custom") {
			continue // a server tool (web search): not a schema
		}
		out = append(out, functionTool(body, fs, name, schema, rule.functionMCP(body, name, schema, "mcp__") && !boolField(body, fs, "strict")))
	}
	return out, false, nil
}

// offeredTools reads a Responses tools array: function tools, and the
// function tools of a namespace (Codex offers an MCP server's tools in a
// namespace named mcp__SERVER, and a call of one names the namespace:
// NAMESPACE__tool here; opencode offers them as function tools named
// SERVER_TOOL, rule). A tool marked defer_loading or a tool_search tool
// means the client defers. A strict tool is never stubbed (a stub would
// not be a strict schema).
func (responsesFormat) offeredTools(body []byte, s span, rule mcpRule) ([]offeredTool, bool, error) {
	elems, err := arrayElems(body, s)
	if err != nil {
		return nil, false, err
	}
	var out []offeredTool
	add := func(e span, ns string) (bool, error) {
		fs, err := objectFields(body, e)
		if err != nil {
			return false, err
		}
		typ := fieldStr(body, fs, "type")
		if boolField(body, fs, "defer_loading") || typ == "tool_search" {
			return true, nil
		}
		schema, ok := get(fs, "parameters")
		if typ != "function" || !ok {
			return false, nil
		}
		name := fieldStr(body, fs, "name")
		mcp := rule.functionMCP(body, name, schema, "mcp__")
		if ns != "" {
			name, mcp = ns+"__"+name, rule == prefixRule && strings.HasPrefix(ns, "mcp__")
		}
		out = append(out, functionTool(body, fs, name, schema, mcp && !boolField(body, fs, "strict")))
		return false, nil
	}
	for _, e := range elems {
		fs, err := objectFields(body, e)
		if err != nil {
			return nil, false, err
		}
		inner, ok := get(fs, "tools")
		if fieldStr(body, fs, "type") != "namespace" || !ok {
			if defers, err := add(e, ""); defers || err != nil {
				return nil, defers, err
			}
			continue
		}
		members, err := arrayElems(body, inner)
		if err != nil {
			return nil, false, err
		}
		for _, m := range members {
			if defers, err := add(m, fieldStr(body, fs, "name")); defers || err != nil {
				return nil, defers, err
			}
		}
	}
	return out, false, nil
}

// offeredTools reads a Gemini tools array: the functionDeclarations of
// its tools; Gemini CLI names an MCP server's tools mcp_SERVER_TOOL and
// gives them a JSON Schema (parametersJsonSchema), the only schemas
// stubbed (a "parameters" schema is the API's own dialect). Only the
// prefix rule applies: how opencode sends MCP tools to Gemini was not
// measured, so under its rule every tool stays whole.
func (geminiFormat) offeredTools(body []byte, s span, rule mcpRule) ([]offeredTool, bool, error) {
	elems, err := arrayElems(body, s)
	if err != nil {
		return nil, false, err
	}
	var out []offeredTool
	for _, e := range elems {
		fs, err := objectFields(body, e)
		if err != nil {
			return nil, false, err
		}
		decls, ok := get(fs, "functionDeclarations")
		if !ok {
			continue // a built-in tool of the API (Google Search)
		}
		members, err := arrayElems(body, decls)
		if err != nil {
			return nil, false, err
		}
		for _, m := range members {
			dfs, err := objectFields(body, m)
			if err != nil {
				return nil, false, err
			}
			name := fieldStr(body, dfs, "name")
			schema, jsonSchema := get(dfs, "parametersJsonSchema")
			if !jsonSchema {
				if schema, ok = get(dfs, "parameters"); !ok {
					continue
				}
			}
			out = append(out, functionTool(body, dfs, name, schema, rule == prefixRule && jsonSchema && strings.HasPrefix(name, "mcp_")))
		}
	}
	return out, false, nil
}

// functionTool is one tool of a tools array: its spec as sent and the
// spans a stub replaces.
func functionTool(body []byte, fs []field, name string, schema span, mcp bool) offeredTool {
	t := offeredTool{spec: harness.ToolSpec{Name: name, Description: fieldStr(body, fs, "description"),
		InputSchema: json.RawMessage(body[schema.Start:schema.End])}, mcp: mcp && kind(body, schema) == '{', schema: schema}
	if d, ok := get(fs, "description"); ok && kind(body, d) == '"' {
		t.desc = d
	}
	return t
}

// mergeEdits merges two lists of edits, each sorted by start and none
// overlapping another, into one sorted list (splice's order).
func mergeEdits(a, b []edit) []edit {
	if len(b) == 0 {
		return a
	}
	out := make([]edit, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].Span.Start <= b[0].Span.Start {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}
