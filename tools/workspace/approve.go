package workspace

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/agentharness/harness"
)

// bulkFields are arguments shown as a summary in approval prompts (size,
// line count, first lines) rather than whole: file contents can be long.
// Every other argument — a shell command in particular — is shown in full,
// since the user is approving exactly that.
var bulkFields = map[string]bool{"content": true, "old_string": true, "new_string": true}

// promptPreviewLines is how many lines of a bulk argument a prompt shows.
const promptPreviewLines = 6

// TerminalApprover returns an Approver that asks on a terminal: it writes
// the tool, its risk and its arguments to out and reads one answer line
// from in. "y" or "yes" approves the call, "a" or "always" approves it and
// every later call of the same tool, anything else (an empty line included)
// refuses it. When in reaches its end every call is refused.
//
// Arguments are shown with control characters escaped, so a model cannot
// redraw the prompt with terminal escape sequences. Calls are asked one at
// a time. If ctx ends while waiting, the call is refused with ctx's error,
// and a line typed after that is discarded rather than taken as the answer
// to the next question; lines piped in ahead are kept for the questions
// that follow. A goroutine reads in while a question waits.
func TerminalApprover(in io.Reader, out io.Writer) harness.Approver {
	t := &terminal{in: in, out: out, always: map[string]bool{}, wake: make(chan struct{}, 1)}
	return t.approve
}

type terminal struct {
	in  io.Reader
	out io.Writer

	ask     sync.Mutex // one question at a time
	start   sync.Once
	mu      sync.Mutex // guards the fields below
	always  map[string]bool
	waiting chan string   // the pending question's answer; nil when none
	wake    chan struct{} // tells the reader a question is waiting
	eof     bool
}

func (t *terminal) approve(ctx context.Context, call harness.ToolCall, spec harness.ToolSpec) (bool, error) {
	t.ask.Lock()
	defer t.ask.Unlock()
	t.mu.Lock()
	if t.always[call.Name] {
		t.mu.Unlock()
		return true, nil
	}
	if t.eof {
		t.mu.Unlock()
		return false, nil
	}
	answer := make(chan string, 1)
	t.waiting = answer
	t.mu.Unlock()
	t.start.Do(func() { go t.readLines() })
	select {
	case t.wake <- struct{}{}:
	default: // a wake-up is already pending; it will find this question
	}

	fmt.Fprint(t.out, prompt(call, spec))
	select {
	case line, ok := <-answer:
		if !ok {
			fmt.Fprintln(t.out, "\n(no more input: refused)")
			return false, nil
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return true, nil
		case "a", "always":
			t.mu.Lock()
			t.always[call.Name] = true
			t.mu.Unlock()
			return true, nil
		}
		return false, nil
	case <-ctx.Done():
		t.mu.Lock()
		if t.waiting == answer {
			t.waiting = nil
		}
		t.mu.Unlock()
		fmt.Fprintln(t.out, "\n(cancelled)")
		return false, ctx.Err()
	}
}

// readLines answers questions from the input, one line per question. It
// reads only while a question is waiting, so lines typed or piped ahead
// stay buffered for the questions that follow; a line whose question was
// abandoned meanwhile (its context ended) is dropped.
func (t *terminal) readLines() {
	r := bufio.NewReader(t.in)
	for range t.wake {
		t.mu.Lock()
		target := t.waiting
		t.mu.Unlock()
		if target == nil {
			continue // the question was abandoned before the read began
		}
		line, err := r.ReadString('\n')
		t.mu.Lock()
		if line != "" || err == nil {
			if t.waiting == target {
				target <- line
				t.waiting = nil
			}
		}
		if err != nil {
			t.eof = true
			if t.waiting != nil {
				close(t.waiting)
				t.waiting = nil
			}
			t.mu.Unlock()
			return
		}
		t.mu.Unlock()
	}
}

// prompt formats the question for one call.
func prompt(call harness.ToolCall, spec harness.ToolSpec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nThe agent wants to run %s (%s)", safe(call.Name), spec.Risk)
	var args map[string]any
	dec := json.NewDecoder(bytes.NewReader(call.Args))
	dec.UseNumber()
	if len(bytes.TrimSpace(call.Args)) == 0 {
		b.WriteString(" with no arguments.\n")
	} else if err := dec.Decode(&args); err != nil {
		fmt.Fprintf(&b, " with arguments that are not a JSON object:\n  %s\n", safe(string(call.Args)))
	} else {
		b.WriteString(":\n")
		keys := make([]string, 0, len(args))
		for k := range args {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s: %s\n", safe(k), argText(k, args[k]))
		}
	}
	fmt.Fprintf(&b, "Allow? [y]es / [N]o / [a]lways allow %s: ", safe(call.Name))
	return b.String()
}

// argText shows one argument value: strings in full, with lines indented,
// except bulk fields, which are summarised.
func argText(key string, v any) string {
	s, isString := v.(string)
	if !isString {
		raw, _ := json.Marshal(v)
		return safe(string(raw))
	}
	if bulkFields[key] {
		lines := strings.Split(s, "\n")
		head := lines[:min(len(lines), promptPreviewLines)]
		out := fmt.Sprintf("%d bytes, %s", len(s), plural(countLines([]byte(s)), "line", "lines"))
		for _, l := range head {
			out += "\n    | " + safe(l)
		}
		if len(lines) > len(head) {
			out += "\n    | …"
		}
		return out
	}
	if !strings.Contains(s, "\n") {
		return safe(s)
	}
	out := ""
	for _, l := range strings.Split(s, "\n") {
		out += "\n    | " + safe(l)
	}
	return out
}

// safe escapes control and invisible formatting characters (ANSI escape
// sequences, carriage returns, bidirectional overrides) so that what the
// user reads is what will run.
func safe(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteString("    ")
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == unicode.ReplacementChar:
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
