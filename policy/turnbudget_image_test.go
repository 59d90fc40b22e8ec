package policy

import (
	"bytes"
	"image"
	"image/png"
	"testing"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/provider/catalog"
)

// screenshot is a PNG of w × h pixels: small in bytes, priced by its
// pixels.
func screenshot(t *testing.T, w, h int) harness.Part {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return harness.ImagePart("image/png", b.Bytes())
}

// TestTurnBudgetCountsImagesAtTheirPrice: a screenshot beside a result's
// text counts against the turn's budget at its price by pixel size (the
// dearest provider's rule, 4 characters a token), never as 0 nor as its
// bytes, and it reaches the model whole while the texts share what it
// leaves.
func TestTurnBudgetCountsImagesAtTheirPrice(t *testing.T) {
	weight := catalog.ImageTokens("", 1280, 800) * imageCharsPerToken
	tests := []struct {
		name      string
		w, h      int
		wantShown []int // text characters of each result in the final request
	}{
		// 2,000 + 6,000 characters and a 1×1 image (255 tokens under
		// OpenAI's rule, 1,020 characters) fit 10,000: all whole.
		{"tiny image", 1, 1, []int{2000, 6000}},
		// A 1280 × 800 screenshot costs 5,464 characters: the texts no
		// longer fit and share 10,000 by water-filling; the screenshot's
		// own text keeps the floor, the other its share.
		{"screenshot", 1280, 800, []int{1000, 5000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conv, turn := turnWith([]int{2000, 6000})
			r := turn.Rounds[0].Results[0]
			r.Parts = append(r.Parts, screenshot(t, tc.w, tc.h))
			v := apply(t, &TurnBudget{Chars: 10_000, MinKeep: 1000, When: FinalRound}, conv, turn, true)
			var got []int
			images := 0
			for i, m := range v.Messages {
				if m.Role != harness.RoleTool || v.Origins[i].Turn != turn.Index {
					continue
				}
				got = append(got, utf8.RuneCountInString(m.Text()))
				for _, p := range m.Parts {
					if p.Type == harness.PartImage {
						images++
					}
				}
			}
			if len(got) != 2 || got[0] > tc.wantShown[0] || got[1] > tc.wantShown[1] || got[1] < tc.wantShown[1]-100 {
				t.Errorf("text shown = %v, want %v (image weight %d)", got, tc.wantShown, weight)
			}
			if images != 1 {
				t.Errorf("%d images reach the model, want the screenshot whole", images)
			}
		})
	}
}

// FuzzTurnBudgetImages: whatever the texts, images and budget, a trim
// keeps every image, never grows a text and never cuts one below the floor
// (or its own size, when smaller).
func FuzzTurnBudgetImages(f *testing.F) {
	f.Add(2000, 6000, 1280, 800, 10_000)
	f.Add(100, 50_000, 1, 1, 1)
	f.Add(30_000, 0, 4000, 3000, 24_000)
	f.Fuzz(func(t *testing.T, a, b, w, h, budget int) {
		if a < 1 || b < 1 || a > 60_000 || b > 60_000 || w < 1 || h < 1 || w > 4000 || h > 4000 || budget < 1 || budget > 100_000 {
			t.Skip()
		}
		conv, turn := turnWith([]int{a, b})
		r := turn.Rounds[0].Results[0]
		r.Parts = append(r.Parts, screenshot(t, w, h))
		const floor = 1000
		v := apply(t, &TurnBudget{Chars: budget, MinKeep: floor, When: FinalRound}, conv, turn, true)
		images := 0
		for i, m := range v.Messages {
			if m.Role != harness.RoleTool || v.Origins[i].Turn != turn.Index {
				continue
			}
			full := utf8.RuneCountInString(v.Origins[i].Result.FullText())
			got := utf8.RuneCountInString(m.Text())
			if got > full || got < min(full, floor) {
				t.Errorf("%s: %d of %d chars shown, floor %d", m.ToolCallID, got, full, floor)
			}
			for _, p := range m.Parts {
				if p.Type == harness.PartImage {
					images++
				}
			}
		}
		if images != 1 {
			t.Errorf("%d images reach the model, want 1", images)
		}
	})
}
