package scripted

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/tokens"
)

// Options configure a scripted Model. Nil means defaults.
type Options struct {
	// Counter counts tokens for the usage of steps that script none (nil:
	// o200k). Input and cached input come from the one prompt-cache model
	// (tokens.PromptCache), as in a replay; output is the count of the
	// reply's JSON.
	Counter tokens.Counter
	// Name is reported as the response's model name (default "scripted").
	Name string
}

// Model plays a Script. It is safe for concurrent use, but a script is one
// conversation: concurrent runs would interleave its steps.
type Model struct {
	script *Script
	opts   Options

	mu    sync.Mutex
	next  int
	cache *tokens.PromptCache
	err   error // loading the default counter failed
}

// New returns a model that plays s from its first step.
func New(s *Script, opts *Options) *Model {
	m := &Model{script: s}
	if opts != nil {
		m.opts = *opts
	}
	if m.opts.Name == "" {
		m.opts.Name = "scripted"
	}
	if m.opts.Counter == nil {
		bpe, err := tokens.O200k()
		if err != nil {
			m.err = fmt.Errorf("scripted: counting tokens: %w", err)
			return m
		}
		m.opts.Counter = bpe
	}
	m.cache = tokens.NewPromptCache(m.opts.Counter)
	return m
}

// Remaining reports how many steps have not been played.
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.script.Steps) - m.next
}

// Generate returns the next step's reply, after checking the request
// against the step's expectations.
func (m *Model) Generate(ctx context.Context, req *harness.Request) (*harness.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return nil, m.err
	}
	if m.next >= len(m.script.Steps) {
		return nil, fmt.Errorf("scripted: the conversation departed from the script: all %d steps were played and the agent asked for another (turn %d, round %d)", len(m.script.Steps), req.Turn, req.Round)
	}
	idx := m.next
	step := m.script.Steps[idx]
	if err := check(step.Expect, req); err != nil {
		return nil, fmt.Errorf("scripted: the conversation departed from the script at step %d (turn %d, round %d): %w", idx+1, req.Turn, req.Round, err)
	}
	m.next++
	msg := harness.Message{Role: harness.RoleAssistant}
	if step.Text != "" {
		msg.Parts = []harness.Part{harness.TextPart(step.Text)}
	}
	for i, c := range step.ToolCalls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", idx+1, i+1)
		}
		args := c.Args
		if c.ArgsRaw != nil {
			args = json.RawMessage(*c.ArgsRaw)
		}
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		msg.ToolCalls = append(msg.ToolCalls, harness.ToolCall{ID: id, Name: c.Name, Args: args})
	}
	resp := &harness.Response{Message: msg, Model: m.opts.Name, StopReason: "end_turn"}
	if len(msg.ToolCalls) > 0 {
		resp.StopReason = "tool_use"
	}
	resp.Usage = m.usage(step, req, msg)
	return resp, nil
}

// GenerateStream plays the next step, delivering its text word by word.
func (m *Model) GenerateStream(ctx context.Context, req *harness.Request, onText func(string)) (*harness.Response, error) {
	resp, err := m.Generate(ctx, req)
	if err != nil {
		return nil, err
	}
	text := resp.Message.Text()
	for len(text) > 0 {
		i := strings.IndexByte(text[1:], ' ')
		if i < 0 {
			onText(text)
			break
		}
		onText(text[:i+1])
		text = text[i+1:]
	}
	return resp, nil
}

// usage reports the step's scripted usage, or computes it: the request
// counted against the prompt cache of the requests before it, and the
// reply. Every request goes through the cache, so a scripted step does not
// hide its request from the next one's prefix.
func (m *Model) usage(step Step, req *harness.Request, reply harness.Message) harness.Usage {
	count := m.cache.Add(req)
	if step.Usage != nil {
		return harness.Usage{Input: step.Usage.Input, Cached: step.Usage.Cached, Output: step.Usage.Output}
	}
	out, _ := json.Marshal(reply)
	return count.Usage(m.opts.Counter.Count(string(out)))
}

func check(e *Expect, req *harness.Request) error {
	if e == nil {
		return nil
	}
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if e.Turn != 0 && e.Turn != req.Turn {
		fail("expected turn %d, got turn %d", e.Turn, req.Turn)
	}
	if e.Round != 0 && e.Round != req.Round {
		fail("expected round %d, got round %d", e.Round, req.Round)
	}
	if e.Final != nil && *e.Final != req.Final {
		if *e.Final {
			fail("expected tools to be withheld (a final request), but %d tools were offered", len(req.Tools))
		} else {
			fail("expected tools to be offered, but the request withheld them")
		}
	}
	names := make([]string, len(req.Tools))
	for i, t := range req.Tools {
		names[i] = t.Name
	}
	for _, n := range e.ToolsInclude {
		if !slices.Contains(names, n) {
			fail("expected tool %q to be offered; offered: [%s]", n, strings.Join(names, ", "))
		}
	}
	for _, n := range e.ToolsExclude {
		if slices.Contains(names, n) {
			fail("expected tool %q not to be offered", n)
		}
	}
	if e.Tools != nil && *e.Tools != len(names) {
		fail("expected %d tools to be offered, got %d", *e.Tools, len(names))
	}
	var all strings.Builder
	lastTool := ""
	evidence := 0
	for _, m := range req.Messages {
		t := m.Text()
		all.WriteString(t)
		all.WriteByte('\n')
		if m.Role == harness.RoleTool {
			lastTool = t
			evidence += utf8.RuneCountInString(t)
		}
	}
	text := all.String()
	for _, s := range e.Contains {
		if !strings.Contains(text, s) {
			fail("expected the request to contain %q", s)
		}
	}
	for _, s := range e.NotContains {
		if strings.Contains(text, s) {
			fail("expected the request not to contain %q", s)
		}
	}
	for _, s := range e.LastToolContains {
		if !strings.Contains(lastTool, s) {
			fail("expected the newest tool result to contain %q", s)
		}
	}
	if e.MaxEvidenceChars > 0 && evidence > e.MaxEvidenceChars {
		fail("expected at most %d evidence characters, got %d", e.MaxEvidenceChars, evidence)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}
