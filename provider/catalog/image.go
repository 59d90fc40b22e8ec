package catalog

import (
	"bytes"
	"image"
	_ "image/gif"  // image.DecodeConfig reads GIF headers
	_ "image/jpeg" // and JPEG
	_ "image/png"  // and PNG
	"math"
	"strings"

	_ "golang.org/x/image/webp" // and WebP
)

// ImageRule names a provider's published rule for what an image in a
// request costs in input tokens. Providers bill an image by its pixels,
// never by the length of its bytes or their base64.
type ImageRule string

// The image rules harness knows.
const (
	// ImageAnthropic: scaled down (aspect kept) until the long edge is at
	// most 1568 px and the area at most 1092×1092 px, then
	// ⌈width × height / 750⌉ tokens (1000×1000 → 1334).
	ImageAnthropic ImageRule = "anthropic"
	// ImageOpenAI is high detail: fit within 2048×2048, scale the short
	// side down to 768, then 85 + 170 per 512-px tile (1024×1024 → 765).
	ImageOpenAI ImageRule = "openai"
	// ImageGemini: 258 tokens for an image at most 384 px on both sides,
	// otherwise 258 per 768×768 tile it is cut into.
	ImageGemini ImageRule = "gemini"
)

// imageFallbackSide is the side of the square an image whose header
// cannot be read is priced as.
const imageFallbackSide = 1024

// ImageSize reads an image's width and height from its header (PNG, JPEG,
// GIF or WebP) without decoding its pixels; ok is false for anything else.
func ImageSize(data []byte) (width, height int, ok bool) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return 0, 0, false
	}
	return cfg.Width, cfg.Height, true
}

// ImageTokens is what an image of width × height pixels costs under rule;
// a size that is not positive is priced as an imageFallbackSide square.
// An empty or unknown rule prices the dearest of the known rules, for
// callers that bound an image without knowing who will be sent it.
func ImageTokens(rule ImageRule, width, height int) int {
	if width <= 0 || height <= 0 {
		width, height = imageFallbackSide, imageFallbackSide
	}
	w, h := float64(width), float64(height)
	switch rule {
	case ImageAnthropic:
		if long := max(w, h); long > 1568 {
			w, h = w*1568/long, h*1568/long
		}
		if area, most := w*h, 1092.0*1092.0; area > most {
			s := math.Sqrt(most / area)
			w, h = w*s, h*s
		}
		return int(math.Ceil(max(1, math.Round(w)) * max(1, math.Round(h)) / 750))
	case ImageOpenAI:
		if long := max(w, h); long > 2048 {
			w, h = w*2048/long, h*2048/long
		}
		if short := min(w, h); short > 768 {
			w, h = w*768/short, h*768/short
		}
		return 85 + 170*tiles(w, 512)*tiles(h, 512)
	case ImageGemini:
		if w <= 384 && h <= 384 {
			return 258
		}
		return 258 * tiles(w, 768) * tiles(h, 768)
	}
	n := 0
	for _, r := range []ImageRule{ImageAnthropic, ImageOpenAI, ImageGemini} {
		n = max(n, ImageTokens(r, width, height))
	}
	return n
}

// tiles is how many tiles of side px cover n pixels (n rounded to whole
// pixels first).
func tiles(n float64, side int) int {
	px := int(math.Round(n))
	return max(1, (px+side-1)/side)
}

// ImageRuleFor picks the rule of the provider serving model (by its name:
// claude → Anthropic, gemini → Gemini); other and unknown models get
// OpenAI's rule.
func ImageRuleFor(model string) ImageRule {
	m := strings.ToLower(model)
	switch {
	case strings.Contains(m, "claude"), strings.Contains(m, "anthropic"):
		return ImageAnthropic
	case strings.Contains(m, "gemini"), strings.Contains(m, "gemma"):
		return ImageGemini
	}
	return ImageOpenAI
}
