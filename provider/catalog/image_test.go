package catalog

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"
)

// TestImageTokens checks each rule against the providers' documented
// examples.
func TestImageTokens(t *testing.T) {
	for _, tc := range []struct {
		rule ImageRule
		w, h int
		want int
	}{
		{ImageAnthropic, 200, 200, 54},
		{ImageAnthropic, 1000, 1000, 1334},
		{ImageAnthropic, 1092, 1092, 1590},
		{ImageAnthropic, 3000, 3000, 1590}, // area cap
		{ImageAnthropic, 1568, 400, 837},   // at the long-edge limit
		{ImageAnthropic, 3136, 800, 837},   // scaled to 1568×400
		{ImageOpenAI, 1024, 1024, 765},     // 768×768: 4 tiles
		{ImageOpenAI, 2048, 4096, 1105},    // 1024×2048 → 768×1536: 6 tiles
		{ImageOpenAI, 512, 512, 255},       // one tile
		{ImageOpenAI, 100, 100, 255},       // never scaled up
		{ImageGemini, 384, 384, 258},       // small: one flat charge
		{ImageGemini, 385, 200, 258},       // one tile
		{ImageGemini, 1024, 1024, 1032},    // 2×2 tiles
		{ImageGemini, 1920, 1080, 258 * 6}, // 3×2 tiles
		{ImageOpenAI, 0, 0, 765},           // unknown size: 1024×1024
		{"", 1000, 1000, 1334},             // dearest of the three
		{"", 1920, 1080, 1590},             // Anthropic: scaled to the area cap
	} {
		if got := ImageTokens(tc.rule, tc.w, tc.h); got != tc.want {
			t.Errorf("ImageTokens(%q, %d, %d) = %d, want %d", tc.rule, tc.w, tc.h, got, tc.want)
		}
	}
}

func TestImageRuleFor(t *testing.T) {
	for model, want := range map[string]ImageRule{
		"claude-sonnet-4-5":    ImageAnthropic,
		"gemini-2.5-pro":       ImageGemini,
		"gpt-5-mini":           ImageOpenAI,
		"deepseek/deepseek-v3": ImageOpenAI,
		"":                     ImageOpenAI,
	} {
		if got := ImageRuleFor(model); got != want {
			t.Errorf("ImageRuleFor(%q) = %q, want %q", model, got, want)
		}
	}
}

func TestImageSize(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 37, 21))
	enc := func(f func(*bytes.Buffer) error) []byte {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	for name, data := range map[string][]byte{
		"png":  enc(func(b *bytes.Buffer) error { return png.Encode(b, img) }),
		"jpeg": enc(func(b *bytes.Buffer) error { return jpeg.Encode(b, img, nil) }),
		"gif":  enc(func(b *bytes.Buffer) error { return gif.Encode(b, img, nil) }),
		"webp": webpLossless(37, 21),
	} {
		w, h, ok := ImageSize(data)
		if !ok || w != 37 || h != 21 {
			t.Errorf("%s: ImageSize = %d×%d, %v; want 37×21", name, w, h, ok)
		}
	}
	for _, bad := range [][]byte{nil, []byte("not an image"), []byte("\x89PNG\r\n\x1a\n")} {
		if _, _, ok := ImageSize(bad); ok {
			t.Errorf("ImageSize(%q) ok", bad)
		}
	}
}

// webpLossless is the header of a lossless WebP of w×h pixels: enough for
// a decoder's DecodeConfig.
func webpLossless(w, h int) []byte {
	bits := uint32(w-1) | uint32(h-1)<<14
	payload := []byte{0x2f, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(payload[1:], bits)
	var b bytes.Buffer
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, uint32(4+8+len(payload)+1))
	b.WriteString("WEBPVP8L")
	binary.Write(&b, binary.LittleEndian, uint32(len(payload)))
	b.Write(payload)
	b.WriteByte(0)
	return b.Bytes()
}

// FuzzImageSize: any bytes give a positive size or not ok, never a panic,
// and whatever size comes back prices to a positive count.
func FuzzImageSize(f *testing.F) {
	var b bytes.Buffer
	png.Encode(&b, image.NewGray(image.Rect(0, 0, 3, 2)))
	f.Add(b.Bytes())
	f.Add(webpLossless(5, 7))
	f.Add([]byte("GIF89a\x01\x00\x01\x00"))
	f.Add([]byte("\xff\xd8\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, h, ok := ImageSize(data)
		if ok && (w <= 0 || h <= 0) {
			t.Fatalf("ok with size %d×%d", w, h)
		}
		for _, r := range []ImageRule{ImageAnthropic, ImageOpenAI, ImageGemini, ""} {
			if n := ImageTokens(r, w, h); n <= 0 {
				t.Fatalf("%q: %d tokens for %d×%d", r, n, w, h)
			}
		}
	})
}
