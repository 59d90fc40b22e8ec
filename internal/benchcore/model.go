package benchcore

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/shellcmd"
	"github.com/agentharness/harness/spill"
)

// setModel gives res a model copy of text and records the cut.
func setModel(res *harness.ToolResult, text string, cut harness.Cut) {
	cut.BytesIn = res.PayloadSize()
	cut.BytesOut = len(text)
	res.Model = []harness.Part{harness.TextPart(text)}
	res.Cuts = append(res.Cuts, cut)
}

// capRule is one system's per-result ceiling: results of the tools it
// applies to that are larger than over characters (or bytes) get the
// model copy cut returns.
type capRule struct {
	by    string
	tools func(name string) bool
	over  int
	// bytes measures over in bytes instead of characters.
	bytes bool
	// when, if set, decides instead of over whether to cut.
	when func(text string) bool
	// cut returns the model copy of text (longer than over).
	cut func(text string) string
	// spillPreview, when > 0, saves the full text to a spill file and
	// shows its first spillPreview characters and the path instead.
	spillPreview int
	// spillShow, when set, saves the full text to a spill file and shows
	// what it returns for the text and the file's locator instead.
	spillShow func(text, loc string) string
}

// capGuard applies the first rule that matches a call's tool.
func capGuard(rules ...capRule) harness.Guard {
	return func(next harness.ToolFunc) harness.ToolFunc {
		return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			res, err := next(ctx, call)
			if err != nil || res == nil {
				return res, err
			}
			for _, r := range rules {
				if r.tools != nil && !r.tools(call.Name) {
					continue
				}
				text := res.ModelText()
				size := utf8.RuneCountInString(text)
				if r.bytes {
					size = len(text)
				}
				if (r.when == nil && size <= r.over) || (r.when != nil && !r.when(text)) {
					break
				}
				if r.spillPreview > 0 || r.spillShow != nil {
					if loc, ok := saveSpill(ctx, call, text); ok {
						show := fmt.Sprintf("Output too large (%d characters). Full output saved to: %s\n\nPreview (first %d characters):\n%s",
							utf8.RuneCountInString(text), loc, r.spillPreview, headChars(text, r.spillPreview))
						if r.spillShow != nil {
							show = r.spillShow(text, loc)
						}
						setModel(res, show, harness.Cut{Kind: harness.CutSpilled, By: r.by, Locator: loc})
						break
					}
				}
				setModel(res, r.cut(text), harness.Cut{Kind: harness.CutTruncated, By: r.by})
				break
			}
			return res, nil
		}
	}
}

// saveSpill writes text to the call's workspace spill folder.
func saveSpill(ctx context.Context, call *harness.ToolCall, text string) (string, bool) {
	info, ok := harness.CallInfoFrom(ctx)
	if !ok || info.Workspace == "" {
		return "", false
	}
	d := &spill.Dir{Workspace: info.Workspace}
	saved, err := d.Save(ctx, spill.Entry{Conversation: info.Conversation, CallID: call.ID, Tool: call.Name, Ext: "txt"}, strings.NewReader(text))
	if err != nil {
		return "", false
	}
	return saved.Locator, true
}

// headChars returns the first n characters of s.
func headChars(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}

// tailChars returns the last n characters of s.
func tailChars(s string, n int) string {
	total := utf8.RuneCountInString(s)
	if total <= n {
		return s
	}
	skip := total - n
	i := 0
	for k := range s {
		if i == skip {
			return s[k:]
		}
		i++
	}
	return ""
}

// IsShell reports whether name is one of the names coding agents give
// their shell tool (shellcmd.IsShell).
func IsShell(name string) bool { return shellcmd.IsShell(name) }

// IsRead reports whether name is one of the names coding agents give their
// file-reading tool.
func IsRead(name string) bool {
	switch strings.ToLower(name) {
	case "read", "read_file", "view", "cat":
		return true
	}
	return false
}

func isFetch(name string) bool {
	switch strings.ToLower(name) {
	case "fetch", "web_fetch", "fetch_url", "get_article":
		return true
	}
	return false
}

// builtin reports whether a tool is one of a coding agent's own tools
// (shell, read, fetch); anything else is taken for an MCP tool.
func builtin(name string) bool { return IsShell(name) || IsRead(name) || isFetch(name) }
