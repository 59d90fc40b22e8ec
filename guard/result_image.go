package guard

import (
	"github.com/agentharness/harness"
	"github.com/agentharness/harness/provider/catalog"
)

// imageBytesPerToken converts an image's price in tokens to the bytes a
// ceiling in bytes counts it as: the bytes of English text of as many
// tokens (DefaultMaxBytes is about 6k tokens).
const imageBytesPerToken = 4

// minTextShare is the least of a result's text a ceiling keeps beside
// images that fill it (or the whole ceiling, when smaller): images are
// never cut, so the text would otherwise shrink to a bare marker.
const minTextShare = 4 << 10

// imageWeight is what an image part counts against a ceiling: its price
// by its pixel size under the dearest provider's rule (the guard does not
// know who will be sent it), never the length of its bytes.
func imageWeight(p harness.Part) int {
	w, h, _ := catalog.ImageSize(p.Data)
	return catalog.ImageTokens("", w, h) * imageBytesPerToken
}

// ceilingSize is what parts count against a ceiling: text and JSON by
// their bytes, images by [imageWeight].
func ceilingSize(parts []harness.Part) int {
	n := 0
	for _, p := range parts {
		if p.Type == harness.PartImage {
			n += imageWeight(p)
		} else {
			n += p.Size()
		}
	}
	return n
}

// splitImages separates the image parts of parts, which a ceiling passes
// to the model whole, from the rest, which it may cut; weight is what the
// images count.
func splitImages(parts []harness.Part) (rest, images []harness.Part, weight int) {
	for _, p := range parts {
		if p.Type == harness.PartImage {
			images = append(images, p)
			weight += imageWeight(p)
		} else {
			rest = append(rest, p)
		}
	}
	return rest, images, weight
}

// textLimit is the ceiling left to the text of a result whose images
// count weight against limit.
func textLimit(limit, weight int) int {
	if weight == 0 {
		return limit
	}
	return max(limit-weight, min(limit, minTextShare))
}

// withoutImages is res with its image parts left out of the full payload:
// what a spill file holds when the images reach the model themselves.
func withoutImages(res *harness.ToolResult) *harness.ToolResult {
	rest, images, _ := splitImages(res.Parts)
	if len(images) == 0 {
		return res
	}
	return &harness.ToolResult{CallID: res.CallID, Tool: res.Tool, Parts: rest, Structured: res.Structured, IsError: res.IsError, Meta: res.Meta}
}
