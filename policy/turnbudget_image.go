package policy

import (
	"github.com/agentharness/harness"
	"github.com/agentharness/harness/provider/catalog"
)

// imageCharsPerToken converts an image's price in tokens to the characters
// a budget in characters counts it as: as many characters of English text
// as the tokens (the guards' ceiling counts an image the same way).
const imageCharsPerToken = 4

// imageWeight is what the image parts of parts count against a turn's
// budget in ms's unit: each at its price by its pixel size under the
// dearest provider's rule (the budget does not know who will be sent it),
// never the length of its bytes. A trim keeps every image.
func imageWeight(parts []harness.Part, ms measure) int {
	n := 0
	for _, p := range parts {
		if p.Type != harness.PartImage {
			continue
		}
		w, h, _ := catalog.ImageSize(p.Data)
		t := catalog.ImageTokens("", w, h)
		if ms.chars {
			t *= imageCharsPerToken
		}
		n += t
	}
	return n
}
