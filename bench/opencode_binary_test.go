package bench

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// opencodeReadJS is opencode 1.18.33's read loop (ReadTool.lines and the
// note after it, no offset or limit) transcribed from the binary, where
// it runs inside an Effect stream that cannot be lifted out alone.
const opencodeReadJS = `
const Sr=2000,Gs=` + "`... (line truncated to ${Sr} chars)`" + `,nt=51200,Ys=` + "`${nt/1024} KB`" + `;
function read(text){
  let ls=text.split(/\r?\n/); if(ls.length&&ls[ls.length-1]==="")ls.pop(); // Stream.splitLines
  let h=[],b={bytes:0,count:0,cut:false,more:false,done:false};
  for(const d of ls){ if(b.done)break; b.count+=1; if(h.length>=2000){b.more=true;continue}
    let w=d.length>Sr?d.substring(0,Sr)+Gs:d,O=Buffer.byteLength(w,"utf-8")+(h.length>0?1:0);
    if(b.bytes+O<=nt){h.push(w);b.bytes+=O;continue} b.cut=b.more=b.done=true; break }
  let R=h.join("\n"),N=h.length,K=N+1;
  if(b.cut)R+=` + "`\\n\\n(Output capped at ${Ys}. Showing lines 1-${N}. Use offset=${K} to continue.)`" + `;
  else if(b.more)R+=` + "`\\n\\n(Showing lines 1-${N} of ${b.count}. Use offset=${K} to continue.)`" + `;
  return R;
}
const cases=JSON.parse(require("fs").readFileSync(0,"utf8"));
process.stdout.write(JSON.stringify(cases.map(c=>c.Op==="tB"?(r=>[r.head,r.tail])(tB(c.Text,c.Lines,c.Bytes)):c.Op==="kB"?[kB(c.Text,c.Marker,2000,51200)]:[read(c.Text)])));
`

// opencodeBoundJS returns ToolOutputStore's cut functions (rf, gB, tB,
// kB) as the opencode binary holds them, skipping when the pinned client
// is not installed.
func opencodeBoundJS(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("..", ".ci", "clients")
	if d := os.Getenv("HARNESS_CLIENTS_DIR"); d != "" {
		dir = d
	}
	bin, err := os.ReadFile(filepath.Join(dir, "node_modules", "opencode-linux-x64", "bin", "opencode"))
	if err != nil {
		t.Skipf("opencode is not installed (%v): run `npm ci --prefix .ci/clients`", err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("node is not on PATH: %v", err)
	}
	start, end := bytes.Index(bin, []byte("var rf=(H,L)=>")), bytes.Index(bin, []byte(",mB=(H)=>"))
	if start < 0 || end < start {
		t.Fatal("no ToolOutputStore cut functions (rf … kB) in the opencode binary: another version?")
	}
	return "let " + string(bin[start+len("var "):end]) + ";"
}

// TestOpencodeAgainstBinary runs the binary's own bound functions and
// its read loop under node on random texts and compares them with the
// preset's: the same text in every case, but for a character of two
// UTF-16 code units straddling a line's 2,000th, which JavaScript keeps
// half of (sent as U+FFFD) and the preset drops.
func TestOpencodeAgainstBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs node on a few MB")
	}
	js := opencodeBoundJS(t) + opencodeReadJS
	type tcase struct {
		Op, Text, Marker string
		Lines, Bytes     int
	}
	r := rand.New(rand.NewPCG(1, 2))
	units := []string{"a", "é", "€", "😀", "\n", "line\n", "xx", "\r\n", " "}
	var cases []tcase
	for range 100 {
		var b strings.Builder
		for n := r.IntN(200_000); b.Len() < n; {
			b.WriteString(strings.Repeat(units[r.IntN(len(units))], 1+r.IntN(3_000)))
		}
		text := b.String()
		cases = append(cases,
			tcase{Op: "tB", Text: text, Lines: r.IntN(3_000), Bytes: r.IntN(120_000)},
			tcase{Op: "kB", Text: text, Marker: opencodeMarker("/tmp/o" + strings.Repeat("é", r.IntN(30)))},
			tcase{Op: "read", Text: text})
	}
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "node", "-e", js)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var want [][]string
	if err := json.Unmarshal(out, &want); err != nil || len(want) != len(cases) {
		t.Fatalf("node's answer: %v (%d of %d)", err, len(want), len(cases))
	}
	compared := 0
	for i, c := range cases {
		var got []string
		switch c.Op {
		case "tB":
			h, tl := opencodeHeadTail(c.Text, c.Lines, c.Bytes)
			got = []string{h, tl}
		case "kB":
			loc := strings.TrimSuffix(strings.TrimPrefix(c.Marker, "... output truncated; full content saved to "), " ...")
			got = []string{opencodeBound(c.Text, loc)}
		case "read":
			s, cut := opencodeReadCut(c.Text)
			if !cut { // the preset leaves such text as it is; opencode re-joins its lines
				continue
			}
			got = []string{s}
			want[i][0] = strings.ReplaceAll(want[i][0], "\uFFFD"+opencodeLineNote, opencodeLineNote)
		}
		compared++
		for j := range got {
			if got[j] != want[i][j] {
				t.Errorf("case %d (%s, %d bytes, %d lines, %d bytes): part %d is %d bytes, opencode's %d", i, c.Op, len(c.Text), c.Lines, c.Bytes, j, len(got[j]), len(want[i][j]))
			}
		}
	}
	t.Logf("%d of %d cases compared (the rest reads nothing cuts)", compared, len(cases))
}
