package benchcore

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"math/rand/v2"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/replay"
)

// screenshotFixture is a Claude Code session (constructed: no shipped run
// has one) whose MCP take_screenshot tool returns PNGs of 1280×800 px, the
// first 27 KB, beside a caption.
const screenshotFixture = "testdata/claude-code-screenshots.jsonl"

// noisePNG is a w×h PNG that compresses as badly as a photo: about 4 × w
// × h bytes.
func noisePNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(3, 4))
	for i := range img.Pix {
		img.Pix[i] = uint8(r.IntN(256))
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestScreenshotSessionCostsNoMoreThanNone replays sessions whose tool
// results hold screenshots under every preset: none costs more than
// keeping everything, under any price model, and under harness's presets
// every screenshot reaches the model whole (its result is never cut, and
// every request costs what none's does).
func TestScreenshotSessionCostsNoMoreThanNone(t *testing.T) {
	shipped, skipped, err := replay.Load(screenshotFixture)
	if err != nil || len(skipped) > 0 || len(shipped) != 1 {
		t.Fatalf("load %s: %v, skipped %v", screenshotFixture, err, skipped)
	}
	// The same session with 150 KB screenshots of 1000×750 px, the size
	// of the held-out run whose screenshot was spilled as base64.
	big, _, _ := replay.Load(screenshotFixture)
	shot := noisePNG(t, 250, 150)
	images := 0
	for _, turn := range big[0].Turns {
		for _, c := range turn.Calls {
			for _, r := range c.Results {
				for i, p := range r.Full {
					if p.Type == harness.PartImage {
						r.Full[i] = harness.ImagePart("image/png", shot)
						images++
					}
				}
			}
		}
	}
	if images != 2 {
		t.Fatalf("the fixture holds %d images, want 2", images)
	}
	for name, rec := range map[string]*replay.Recording{"shipped": shipped[0], "150 KB screenshots": big[0]} {
		t.Run(name, func(t *testing.T) {
			tab, err := Run(context.Background(), []*replay.Recording{rec}, &Options{Presets: Presets()})
			if err != nil {
				t.Fatal(err)
			}
			for _, row := range tab.Rows {
				if row.Kind == "bound" {
					continue
				}
				if row.AboveTolerance > 0 || row.Worst > 1 {
					t.Errorf("%s: %d runs above %.2f × none, worst %.3f", row.Preset, row.AboveTolerance, Tolerance, row.Worst)
				}
			}
			none, _ := Lookup("none")
			base, err := replay.Replay(context.Background(), rec, none.Policy(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"harness", "harness-proxy"} {
				p, _ := Lookup(name)
				rep, err := replay.Replay(context.Background(), rec, p.Policy(), nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range rep.Results {
					if r.Tool == "mcp__chrome-devtools__take_screenshot" && r.State != "whole" {
						t.Errorf("%s: screenshot %s is %s", name, r.CallID, r.State)
					}
				}
				for i, c := range rep.Calls {
					if i >= len(base.Calls) || c.Input != base.Calls[i].Input {
						t.Errorf("%s: request %d has %d input tokens, none's %d", name, i, c.Input, base.Calls[min(i, len(base.Calls)-1)].Input)
					}
				}
			}
		})
	}
}
