package guard

import (
	"bytes"
	"context"
	"encoding/json"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/locator"
	"github.com/agentharness/harness/spill"
)

// applyCeiling cuts the model copy of an in-memory result to limit bytes,
// spilling the full payload first when it can. Images count at their
// price by pixel size and reach the model whole; the text beside them is
// cut to what they leave (at least minTextShare) and spilled without them.
// skipSpill, when set, is why the result must not be spilled.
func (g *resultGuard) applyCeiling(ctx context.Context, call *harness.ToolCall, info harness.CallInfo, res *harness.ToolResult, limit int, skipSpill string) {
	if res.Bytes == 0 {
		res.Bytes = res.PayloadSize()
	}
	parts := res.ModelParts()
	size := ceilingSize(parts)
	if size <= limit {
		return
	}
	// Images reach the model whole: the text beside them is cut to what
	// they leave of the ceiling.
	parts, images, weight := splitImages(parts)
	if limit = textLimit(limit, weight); resultPartsSize(parts) <= limit {
		return
	}
	m := cutMarker{mode: modeTruncated, tool: markerSafe(call.Name, 64), size: int64(size - weight), limit: limit}
	source := []byte(harness.Message{Parts: parts}.Text())
	fill := true
	cut := harness.Cut{Kind: harness.CutTruncated, By: ResultPolicyName, BytesIn: size, Locator: locator.Call(call.ID)}
	if page := spillPagePath(res, info); page != "" {
		m.mode, m.path = modePage, markerSafe(page, 200)
		cut.Locator = page
	} else if skipSpill != "" {
		m.reason = skipSpill
	} else if store := g.storeFor(info); store == nil {
		m.reason = g.noSpillReason()
	} else {
		content, ext := spillContent(call, withoutImages(res))
		saved, err := store.Save(ctx, spill.Entry{Conversation: info.Conversation, CallID: call.ID, Tool: call.Name, Ext: ext}, bytes.NewReader(content))
		if err != nil {
			m.reason = "saving it failed: " + markerSafe(err.Error(), 160)
			emitResultWarning(ctx, call.Name+": could not spill an oversized result, truncating it instead: "+err.Error())
		} else {
			m.mode, m.path, m.hint = modeSpilled, markerSafe(saved.Locator, 200), saved.Hint
			if m.hint == "" {
				m.hint = spill.DefaultHint
			}
			source, fill = content, false
			cut.Kind, cut.Locator = harness.CutSpilled, saved.Locator
		}
	}
	out := g.renderPreview(ctx, call, previewSourceOf(source), true, m, limit, fill)
	res.Model = append([]harness.Part{harness.TextPart(out)}, images...)
	cut.BytesOut = len(out) + weight
	res.Cuts = append(res.Cuts, cut)
	emitResultCut(ctx, call, res, cut, limit, describeResultCut(call, cut))
}

func (g *resultGuard) noSpillReason() string {
	if g.noSpill {
		return "spilling is off"
	}
	return "there is no workspace to spill into"
}

func resultPartsSize(parts []harness.Part) int {
	n := 0
	for _, p := range parts {
		n += p.Size()
	}
	return n
}

func resultImageCount(parts []harness.Part) int {
	n := 0
	for _, p := range parts {
		if p.Type == harness.PartImage {
			n++
		}
	}
	return n
}

// spillPagePath returns the workspace-relative path of a result that is a
// read of a spill file (Meta["path"] under .harness/spill/), or "".
func spillPagePath(res *harness.ToolResult, info harness.CallInfo) string {
	p, _ := res.Meta["path"].(string)
	if p == "" {
		return ""
	}
	if filepath.IsAbs(p) && info.Workspace != "" {
		if rel, err := filepath.Rel(info.Workspace, p); err == nil {
			p = rel
		}
	}
	p = path.Clean(filepath.ToSlash(p))
	if p == spill.Folder || strings.HasPrefix(p, spill.Folder+"/") {
		return p
	}
	return ""
}

// spillContent is what a spill file holds and its kind. When one text part
// holds at least 80% of the bytes the file is raw text (every text and JSON
// part, as the model would read them), so line paging and grep work; if
// that text is the whole payload and a JSON document, it is pretty-printed
// as .json instead, because a one-line JSON document cannot be paged by
// lines. Otherwise the file is the parts as pretty-printed JSON.
func spillContent(call *harness.ToolCall, res *harness.ToolResult) ([]byte, string) {
	parts := res.FullParts()
	total := resultPartsSize(parts)
	if len(parts) == 1 && parts[0].Type == harness.PartJSON {
		if doc, ok := spillJSONDoc(parts[0].JSON); ok {
			return doc, "json"
		}
	}
	for _, p := range parts {
		if p.Type != harness.PartText || int64(p.Size())*5 < int64(total)*4 {
			continue
		}
		if len(parts) == 1 {
			if doc, ok := spillJSONDoc([]byte(p.Text)); ok {
				return doc, "json"
			}
		}
		return []byte(harness.Message{Parts: parts}.Text()), "txt"
	}
	doc := spillDoc{Tool: call.Name, CallID: call.ID, IsError: res.IsError, Parts: make([]harness.Part, len(parts))}
	for i, p := range parts {
		if p.Type == harness.PartJSON && !json.Valid(p.JSON) {
			p = harness.TextPart(string(p.JSON))
		}
		doc.Parts[i] = p
	}
	// Encoded compact, then indented only within maxSpillGrowth: an
	// indenting encoder would indent the parts' JSON too, at a cost that
	// grows with the square of its depth.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return []byte(harness.Message{Parts: parts}.Text()), "txt"
	}
	if pretty, ok := spillPrettyJSON(b.Bytes()); ok {
		return pretty, "json"
	}
	return b.Bytes(), "json"
}

// spillDoc is the .json spill file of a payload no single text part
// dominates.
type spillDoc struct {
	Tool    string         `json:"tool"`
	CallID  string         `json:"call_id"`
	IsError bool           `json:"is_error,omitempty"`
	Parts   []harness.Part `json:"parts"`
}
