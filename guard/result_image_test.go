package guard

import (
	"bytes"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

// screenshotPNG is a w×h PNG of noise, which compresses as badly as a
// real screenshot: about w×h bytes.
func screenshotPNG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = uint8(r.IntN(256))
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestResultPolicyImagesAtTheirPrice: an image counts by its pixels, not
// its bytes, and reaches the model whole; text beside it is cut to what
// it leaves of the ceiling and spilled without it.
func TestResultPolicyImagesAtTheirPrice(t *testing.T) {
	shot := screenshotPNG(t, 400, 300) // ~120 KB: 5 ceilings by its bytes
	if len(shot) < 4*DefaultMaxBytes {
		t.Fatalf("screenshot of %d bytes is too small for the test", len(shot))
	}
	weight := imageWeight(harness.ImagePart("image/png", shot))
	large := blankPNG(t, 1500, 1000) // priced near Anthropic's cap, 1590 tokens, in a few KB
	if w := imageWeight(harness.ImagePart("image/png", large)); 4*w <= DefaultMaxBytes || len(large) > 16<<10 {
		t.Fatalf("a 1500×1000 image of %d bytes weighs %d bytes", len(large), w)
	}
	for _, tc := range []struct {
		name     string
		parts    []harness.Part
		cut      bool
		textMax  int // bytes of text the model copy may hold
		spillHas string
	}{
		{name: "screenshot alone", parts: []harness.Part{harness.ImagePart("image/png", shot)}},
		{name: "screenshot and a caption", parts: []harness.Part{harness.TextPart("Took a screenshot of the page."), harness.ImagePart("image/png", shot)}},
		{name: "ten screenshots and a short text", parts: append(repeatPart(harness.ImagePart("image/png", shot), 10), harness.TextPart(strings.Repeat("line of text\n", 200)))},
		{name: "screenshot and a long log", parts: []harness.Part{harness.TextPart(rpLog(40 << 10)), harness.ImagePart("image/png", shot)},
			cut: true, textMax: DefaultMaxBytes - weight, spillHas: "TestVerdict"},
		{name: "ten screenshots and a long log", parts: append(repeatPart(harness.ImagePart("image/png", shot), 10), harness.TextPart(rpLog(40<<10))),
			cut: true, textMax: DefaultMaxBytes - 10*weight, spillHas: "TestVerdict"},
		{name: "large screenshots that fill the ceiling and a long log", parts: append(repeatPart(harness.ImagePart("image/png", large), 4), harness.TextPart(rpLog(40<<10))),
			cut: true, textMax: minTextShare, spillHas: "TestVerdict"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			in := &harness.ToolResult{Parts: tc.parts}
			out := rpCall(t, nil, rpContext(ws, "c", harness.ReadOnly, nil), "take_screenshot", "call_1", in)
			if (len(out.Cuts) > 0) != tc.cut {
				t.Fatalf("cut = %v, want %v (%+v)", len(out.Cuts) > 0, tc.cut, out.Cuts)
			}
			var shown []harness.Part
			for _, p := range out.ModelParts() {
				if p.Type == harness.PartImage {
					shown = append(shown, p)
				}
			}
			_, want, _ := splitImages(tc.parts)
			if len(shown) != len(want) {
				t.Fatalf("%d images reach the model, want %d", len(shown), len(want))
			}
			for i := range shown {
				if !bytes.Equal(shown[i].Data, want[i].Data) || shown[i].MIMEType != want[i].MIMEType {
					t.Fatalf("image %d changed on its way to the model", i)
				}
			}
			if text := rpModelText(out); tc.cut && len(text) > tc.textMax {
				t.Errorf("text of the copy is %d bytes, want at most %d", len(text), tc.textMax)
			}
			if !tc.cut {
				return
			}
			data, err := os.ReadFile(filepath.Join(ws, out.Cuts[0].Locator))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(data, []byte(tc.spillHas)) || bytes.Contains(data, []byte("iVBOR")) || len(data) > 64<<10 {
				t.Errorf("spill file of %d bytes: want the text without the image's base64", len(data))
			}
		})
	}
}

// blankPNG is a w×h PNG of one colour: few bytes, many pixels.
func blankPNG(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func repeatPart(p harness.Part, n int) []harness.Part {
	out := make([]harness.Part, n)
	for i := range out {
		out[i] = p
	}
	return out
}
