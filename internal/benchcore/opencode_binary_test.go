package benchcore

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
// Truncate.output from the head (how opencode cuts an MCP tool's
// result), with the hint for an agent that may call its task tool.
function head(text,loc){
  const y=2000,w=51200; let m=text.split("\n"),g=Buffer.byteLength(text,"utf-8");
  if(m.length<=y&&g<=w)return text;
  let l=[],b=0,k=false;
  for(let r=0;r<m.length&&r<y;r++){let x=Buffer.byteLength(m[r],"utf-8")+(r>0?1:0);if(b+x>w){k=true;break}l.push(m[r]),b+=x}
  let u=k?g-b:m.length-l.length,Y=k?"bytes":"lines",n=l.join("\n");
  let t=` + "`The tool call succeeded but the output was truncated. Full output saved to: ${loc}\nUse the Task tool to have explore agent process this file with Grep and Read (with offset/limit). Do NOT read the full file yourself - delegate to save context.`" + `;
  return ` + "`${n}\n\n...${u} ${Y} truncated...\n\n${t}`" + `;
}
const cases=JSON.parse(require("fs").readFileSync(0,"utf8"));
process.stdout.write(JSON.stringify(cases.map(c=>c.Op==="head"?[head(c.Text,c.Loc)]:c.Op==="shell"?(r=>[r.cut?"cut":"",r.text])(es(c.Text,2000,51200)):[read(c.Text)])));
`

// opencodeHeadSource is Truncate.output's loop from the head as the
// opencode 1.18.33 binary holds it: the transcription above must match it.
const opencodeHeadSource = `if(j==="head")for(r=0;r<m.length&&r<y;r++){let x=Buffer.byteLength(m[r],"utf-8")+(r>0?1:0);if(b+x>w){k=!0;break}l.push(m[r]),b+=x}`

// checkOpencodeBinary skips unless node is installed, and checks, when the
// pinned opencode is, that its binary still holds the code transcribed. It
// returns the binary's own cut of a shell output (its function es), or ""
// when opencode is not installed.
func checkOpencodeBinary(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("node is not on PATH: %v", err)
	}
	dir := filepath.Join("..", ".ci", "clients")
	if d := os.Getenv("HARNESS_CLIENTS_DIR"); d != "" {
		dir = d
	}
	bin, err := os.ReadFile(filepath.Join(dir, "node_modules", "opencode-linux-x64", "bin", "opencode"))
	if err != nil {
		t.Logf("opencode is not installed (%v): the transcription is not checked against its binary, nor the shell's cut", err)
		return ""
	}
	for _, src := range []string{opencodeHeadSource, "...${u} ${Y} truncated...", "Use the Task tool to have explore agent process this file with Grep and Read (with offset/limit). Do NOT read the full file yourself - delegate to save context.",
		"Output capped at ${Ys}. Showing lines ${q.offset}-${N}. Use offset=${K} to continue."} {
		if !bytes.Contains(bin, []byte(src)) {
			t.Errorf("the opencode binary no longer holds %.80q: another version? transcribe it again", src)
		}
	}
	start := bytes.Index(bin, []byte("function es(o,e,r){"))
	end := bytes.Index(bin[max(start, 0):], []byte("}var ts="))
	if start < 0 || end < 0 {
		t.Error("no shell cut (function es) in the opencode binary: another version?")
		return ""
	}
	return string(bin[start : start+end+1])
}

// TestOpencodeAgainstBinary runs opencode's cut of an MCP tool's result
// and its read loop, as transcribed from the binary, under node on random
// texts and compares them with the preset's: the same text in every case,
// but for a character of two UTF-16 code units straddling a line's
// 2,000th, which JavaScript keeps half of (sent as U+FFFD) and the preset
// drops.
func TestOpencodeAgainstBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs node on a few MB")
	}
	shell := checkOpencodeBinary(t)
	js := opencodeReadJS
	if shell != "" {
		js = shell + ";" + js
	}
	type tcase struct{ Op, Text, Loc string }
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
			tcase{Op: "head", Text: text, Loc: "/tmp/o" + strings.Repeat("é", r.IntN(30))},
			tcase{Op: "read", Text: text})
		if shell != "" {
			cases = append(cases, tcase{Op: "shell", Text: text})
		}
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
		case "shell":
			if opencodeOver(c.Text) != (want[i][0] == "cut") {
				t.Errorf("case %d: the preset cuts %v, opencode %q", i, opencodeOver(c.Text), want[i][0])
				continue
			}
			if want[i][0] == "" {
				continue
			}
			got, want[i] = []string{strings.TrimPrefix(opencodeCut(c.Text, ""), "...output truncated...\n\n")}, want[i][1:]
		case "head":
			if !opencodeOver(c.Text) {
				if want[i][0] != c.Text {
					t.Errorf("case %d: opencode cut a text within its limits", i)
				}
				continue
			}
			got = []string{opencodeHeadCut(c.Text, c.Loc)}
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
				t.Errorf("case %d (%s, %d bytes): part %d is %d bytes, opencode's %d", i, c.Op, len(c.Text), j, len(got[j]), len(want[i][j]))
			}
		}
	}
	t.Logf("%d of %d cases compared (the rest texts neither rule cuts)", compared, len(cases))
}
