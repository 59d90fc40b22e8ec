package benchcore

import (
	"bytes"
	"context"
	"encoding/xml"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// checkPage validates an audit page as a document: it must parse as strict
// XML (every element closed, attributes quoted, entities defined — a
// stricter test than HTML's), hold two SVG charts per recording, load no
// external resource and carry one inline script only. It is the test that
// runs where Chromium is not installed; renderPage is the one that runs
// where it is.
func checkPage(t *testing.T, page string, recordings int) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(page))
	dec.Strict = true
	svgs, scripts, depth := 0, 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the page is not well-formed: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			depth++
			switch el.Name.Local {
			case "svg":
				svgs++
			case "script":
				scripts++
			case "link", "img", "iframe", "object":
				t.Errorf("<%s> in a self-contained page", el.Name.Local)
			}
			for _, a := range el.Attr {
				if (a.Name.Local == "src" || a.Name.Local == "href") && !strings.HasPrefix(a.Value, "#") {
					t.Errorf("external resource %s=%q", a.Name.Local, a.Value)
				}
			}
		case xml.EndElement:
			depth--
		}
	}
	if depth != 0 || svgs != 2*recordings || scripts != 1 {
		t.Errorf("depth %d, %d svg charts for %d recordings, %d scripts", depth, svgs, recordings, scripts)
	}
}

// chromiumArgs are the flags of a headless, offline, throw-away Chromium.
func chromiumArgs(profile string) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir=" + profile}
}

// chromium returns the browser's path, or "" when it is not installed
// (CHROMIUM overrides the lookup).
func chromium() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// runChromium runs the browser on the page file with extra flags and
// returns its standard output.
func runChromium(t *testing.T, browser, file string, extra ...string) []byte {
	t.Helper()
	// Only a hang may stop the browser: a loaded machine starts it slowly.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args := append(chromiumArgs(t.TempDir()), extra...)
	cmd := exec.CommandContext(ctx, browser, append(args, "file://"+file)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(extra, " "), err, stderr.String())
	}
	return out
}

// renderPage loads the page in headless Chromium and checks the rendered
// DOM: the charts' SVG elements are there (two per recording, with their
// bars and lines), the page's script ran to its end (body data-ready) and
// no script error was caught (body data-errors). It then takes a
// screenshot and checks that the bars were painted. It returns the
// rendered DOM.
func renderPage(t *testing.T, browser, page string, recordings int) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "audit.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(runChromium(t, browser, file, "--dump-dom"))
	if n := strings.Count(dom, "<svg"); n != 2*recordings {
		t.Errorf("the rendered DOM has %d svg charts, want %d", n, 2*recordings)
	}
	if strings.Count(dom, `<rect class="bar"`) == 0 || strings.Count(dom, "<polyline") < recordings {
		t.Errorf("the charts are empty: %d bars, %d lines", strings.Count(dom, `<rect class="bar"`), strings.Count(dom, "<polyline"))
	}
	body := regexp.MustCompile(`<body[^>]*>`).FindString(dom)
	if !strings.Contains(body, `data-ready="1"`) || strings.Contains(body, "data-errors") {
		t.Errorf("the page's script did not run cleanly: %s", body)
	}

	shot := filepath.Join(t.TempDir(), "audit.png")
	runChromium(t, browser, file, "--window-size=1000,1400", "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if n := countColor(img, palette[0]); n < 500 {
		t.Errorf("the screenshot shows %d pixels of the bars' colour", n)
	}
	return dom
}

// countColor counts the pixels of img that are (within a small tolerance)
// the colour hex, "#rrggbb".
func countColor(img image.Image, hex string) int {
	var want [3]uint8
	for i := range want {
		var v uint8
		for _, c := range hex[1+2*i : 3+2*i] {
			v = v<<4 | uint8(strings.IndexRune("0123456789abcdef", c))
		}
		want[i] = v
	}
	n := 0
	bnd := img.Bounds()
	for y := bnd.Min.Y; y < bnd.Max.Y; y++ {
		for x := bnd.Min.X; x < bnd.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			if near(c.R, want[0]) && near(c.G, want[1]) && near(c.B, want[2]) {
				n++
			}
		}
	}
	return n
}

func near(a, b uint8) bool { return a >= b-min(b, 6) && a <= b+min(255-b, 6) }

// TestAuditPageInChromium renders an audit of two scenarios in headless
// Chromium (installed by .ci/run; where it is missing the page is
// validated as a document only, and the test says so). A page whose
// script fails must be caught.
func TestAuditPageInChromium(t *testing.T) {
	recs, err := Suite()
	if err != nil {
		t.Fatal(err)
	}
	h, _ := Lookup("harness")
	report, err := AuditRecordings(context.Background(), recs[5:7], &Options{Presets: []Preset{h}})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := report.WriteHTML(&sb); err != nil {
		t.Fatal(err)
	}
	page := sb.String()
	checkPage(t, page, 2)
	// The total heads the page: one row per preset (none and harness),
	// before the first recording's section.
	total, first := strings.Index(page, `<section id="total"><h2>In total: 2 recordings`), strings.Index(page, `<section id="rec-0">`)
	if total < 0 || first < total || strings.Count(page[total:first], "<tr><td") != 2 || !strings.Contains(page[total:first], "removed openai") {
		t.Errorf("no total of two rows before the recordings:\n%s", page[:min(len(page), 3000)])
	}
	if !strings.Contains(page[total:first], "The prompt cache expires after 5m idle.") {
		t.Errorf("the total does not say how the cache was priced:\n%s", page[total:first])
	}
	sb.Reset()
	if err := WriteAuditHTML(&sb, report.Audits); err != nil || strings.Contains(sb.String(), `id="total"`) {
		t.Errorf("WriteAuditHTML: %v, total shown %v", err, strings.Contains(sb.String(), `id="total"`))
	}
	browser := chromium()
	if browser == "" {
		t.Skip("no chromium: the page was validated as a document only (install Debian's chromium to render it)")
	}
	renderPage(t, browser, page, 2)

	// The detector detects: a script that throws leaves data-errors and
	// no data-ready.
	broken := strings.Replace(page, `document.body.setAttribute("data-ready", "1");`, `undefinedFunction();`, 1)
	file := filepath.Join(t.TempDir(), "broken.html")
	if err := os.WriteFile(file, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	body := regexp.MustCompile(`<body[^>]*>`).FindString(string(runChromium(t, browser, file, "--dump-dom")))
	if strings.Contains(body, "data-ready") || !strings.Contains(body, "undefinedFunction") {
		t.Errorf("a failing script went unnoticed: %s", body)
	}
}
