package bench

import (
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// checkPage validates an audit page: it must parse as strict XML (every
// element closed, attributes quoted, entities defined — a stricter test
// than HTML's), hold two SVG charts per recording, and load no external
// resource. When Chromium is installed, it also renders the page headless
// and checks the charts are in the rendered DOM.
func checkPage(t *testing.T, page string, recordings int) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(page))
	dec.Strict = true
	svgs, depth := 0, 0
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
			if el.Name.Local == "svg" {
				svgs++
			}
			for _, a := range el.Attr {
				if (a.Name.Local == "src" || a.Name.Local == "href") && !strings.HasPrefix(a.Value, "#") {
					t.Errorf("external resource %s=%q", a.Name.Local, a.Value)
				}
			}
			if el.Name.Local == "script" || el.Name.Local == "link" {
				t.Errorf("<%s> in a self-contained page", el.Name.Local)
			}
		case xml.EndElement:
			depth--
		}
	}
	if depth != 0 || svgs != 2*recordings {
		t.Errorf("depth %d, %d svg charts for %d recordings", depth, svgs, recordings)
	}
	chromium := "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		t.Log("no chromium: the page was validated as XML only")
		return
	}
	p := filepath.Join(t.TempDir(), "audit.html")
	if err := os.WriteFile(p, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", "file://"+p).Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if n := strings.Count(string(out), "<svg"); n != 2*recordings {
		t.Errorf("chromium rendered %d svg charts", n)
	}
}
