package benchcore

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/promptunit"
	"github.com/agentharness/harness/replay"
	"github.com/agentharness/harness/tokens"
)

// Suite returns the built-in scenarios, generated deterministically (a
// fixed-seed PCG) from typical agent runs:
//
//   - lockfile: a search across a project reads package-lock.json (about
//     400 KB) on the way; later rounds carry it (53,487 input
//     tokens for "search these files for a word").
//   - seven-articles: one turn reads seven article bodies of 8,000
//     characters each and answers in the synthesis call after the round
//     limit (56,000 characters of evidence in the final round).
//   - graphql-84: 84 GraphQL tool schemas (14 object types of a store ×
//     get, list, create, update, delete, count) offered on each of eight
//     rounds, of which two tools are called: a tool selection
//     offers 20 of them per turn.
//   - spill-paging: a 200 KB log is read, then paged through with offset
//     and limit and searched with grep.
//   - build-log-tail: a 150 KB build log whose error is in its last lines
//     (openai/codex #6415): head-only cuts lose the verdict.
//   - overlapping-reads: one file read again and again in overlapping line
//     ranges, and once exactly repeated (recorded agents re-read about 60% of what they read).
//   - stuck-loop: the same failing test run eight times in a row.
//   - answered-with-tools: the seed's customer case as it happened: seven
//     rounds each read one article of about 8,000 characters (the tool's
//     own cut) found through the previous one's related link, and the
//     model answers on its own in round eight, tools still offered
//     (56,000 characters of evidence in that request with no budget).
//
// Each call's output tokens are the o200k count of the assistant message
// (text and call arguments); recorded input usage is left zero.
func Suite() ([]*replay.Recording, error) {
	bpe, err := tokens.O200k()
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	gens := []func(*scenario){lockfile, sevenArticles, graphql84, spillPaging, buildLogTail, overlappingReads, stuckLoop, answeredWithTools}
	var out []*replay.Recording
	for i, g := range gens {
		s := &scenario{rng: rand.New(rand.NewPCG(uint64(i+1), 0x5eed)), counter: bpe}
		g(s)
		out = append(out, s.rec)
	}
	return out, nil
}

// scenario builds one recording.
type scenario struct {
	rec     *replay.Recording
	rng     *rand.Rand
	counter tokens.Counter
	calls   int
}

func (s *scenario) start(id, system, input string, tools ...harness.ToolSpec) {
	s.rec = &replay.Recording{Source: "builtin:" + id, Format: "builtin", ID: id, Model: "gpt-4o", System: system, Tools: tools}
	s.rec.Turns = []*replay.Turn{{Input: input}}
}

// step records one model call: its thought, its calls (tool name, args
// object, full output) and marks it final when tools were withheld.
type callSpec struct {
	tool   string
	args   string
	output string
}

func (s *scenario) step(thought string, calls ...callSpec) *replay.Call {
	c := &replay.Call{}
	c.Assistant = harness.Message{Role: harness.RoleAssistant}
	if thought != "" {
		c.Assistant.Parts = []harness.Part{harness.TextPart(thought)}
	}
	for _, cs := range calls {
		s.calls++
		id := fmt.Sprintf("call_%d", s.calls)
		c.Assistant.ToolCalls = append(c.Assistant.ToolCalls, harness.ToolCall{ID: id, Name: cs.tool, Args: json.RawMessage(cs.args)})
		c.Results = append(c.Results, &replay.Result{CallID: id, Tool: cs.tool, Full: []harness.Part{harness.TextPart(cs.output)}, Shown: cs.output})
	}
	c.Usage.Output = tokens.CountMessage(s.counter, &c.Assistant) - promptunit.MessageOverhead
	c.HasUsage = true
	t := s.rec.Turns[len(s.rec.Turns)-1]
	t.Calls = append(t.Calls, c)
	return c
}

func tool(name, desc string, risk harness.Risk, props ...string) harness.ToolSpec {
	var p []string
	for _, x := range props {
		p = append(p, fmt.Sprintf("%q:{\"type\":\"string\"}", x))
	}
	return harness.ToolSpec{Name: name, Description: desc, Risk: risk,
		InputSchema: json.RawMessage(`{"type":"object","properties":{` + strings.Join(p, ",") + `}}`)}
}

var (
	readTool  = tool("read_file", "Read a text file of the workspace; offset and limit select lines.", harness.ReadOnly, "path", "offset", "limit")
	grepTool  = tool("grep", "Search files of the workspace for a regular expression.", harness.ReadOnly, "pattern", "path")
	listTool  = tool("list", "List a folder of the workspace.", harness.ReadOnly, "path")
	bashTool  = tool("bash", "Run a shell command in the workspace.", harness.Destructive, "command")
	editTool  = tool("edit", "Replace text in a file.", harness.Destructive, "path", "old", "new")
	codingSys = "You are a coding agent working in a workspace through tools. Read before you answer and cite what you found."
)

const letters = "abcdefghijklmnopqrstuvwxyz"

// word returns a pseudo-random lower-case word of n letters.
func (s *scenario) word(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[s.rng.IntN(len(letters))]
	}
	return string(b)
}

// hex returns n pseudo-random hex digits.
func (s *scenario) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[s.rng.IntN(16)]
	}
	return string(b)
}

// prose returns about n characters of sentences of random words.
func (s *scenario) prose(n int) string {
	var b strings.Builder
	for b.Len() < n {
		w := 2 + s.rng.IntN(9)
		b.WriteString(s.word(w))
		switch s.rng.IntN(12) {
		case 0:
			b.WriteString(".\n")
		case 1:
			b.WriteString(", ")
		default:
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// source returns a Go-like file of n lines with numbered functions.
func (s *scenario) source(n int, names []string) []string {
	lines := make([]string, n)
	for i := range lines {
		switch {
		case i%25 == 0 && i/25 < len(names):
			lines[i] = fmt.Sprintf("func %s(ctx context.Context, in *Request) (*Response, error) {", names[i/25])
		case i%25 == 24:
			lines[i] = "}"
		default:
			lines[i] = fmt.Sprintf("\t%s := %s(%s, %d)", s.word(5), s.word(7), s.word(4), s.rng.IntN(1000))
		}
	}
	return lines
}

// numbered renders lines from..to (1-based, inclusive) as read_file does.
func numbered(lines []string, from, to int) string {
	var b strings.Builder
	for i := from; i <= to && i <= len(lines); i++ {
		fmt.Fprintf(&b, "%6d\t%s\n", i, lines[i-1])
	}
	return b.String()
}

func lockfile(s *scenario) {
	s.start("lockfile", codingSys, "Search these files for the word 'retryBudget' and tell me which version of zod the project locks.", readTool, grepTool, listTool)
	var pkgs []string
	zodAt := 700
	integrity := "sha512-" + s.hex(40)
	for i := 0; i < 1400; i++ {
		name, ver := s.word(4+s.rng.IntN(8)), fmt.Sprintf("%d.%d.%d", s.rng.IntN(9), s.rng.IntN(30), s.rng.IntN(20))
		integ := "sha512-" + s.hex(40)
		if i == zodAt {
			name, ver, integ = "zod", "3.23.8", integrity
		}
		pkgs = append(pkgs, fmt.Sprintf("    \"node_modules/%s\": {\n      \"version\": \"%s\",\n      \"resolved\": \"https://registry.example/%s/-/%s-%s.tgz\",\n      \"integrity\": \"%s\"\n    }", name, ver, name, name, ver, integ))
	}
	lock := "{\n  \"name\": \"shop\",\n  \"lockfileVersion\": 3,\n  \"packages\": {\n" + strings.Join(pkgs, ",\n") + "\n  }\n}\n"
	s.step("Listing the project first.", callSpec{"list", `{"path":"."}`, "package.json\npackage-lock.json\nsrc/\nREADME.md\n"})
	s.step("Searching for the word.", callSpec{"grep", `{"pattern":"retryBudget","path":"src"}`, "src/client.ts:14:  const retryBudget = new RetryBudget(3)\nsrc/client.ts:41:  retryBudget.spend()\n"})
	s.step("Reading the lock file for the zod version.", callSpec{"read_file", `{"path":"package-lock.json"}`, lock})
	src := s.source(120, []string{"fetchOrders", "retryPolicy", "spendBudget", "newClient"})
	s.step("Reading the client where retryBudget is used.", callSpec{"read_file", `{"path":"src/client.ts"}`, numbered(src, 1, 120)})
	s.step(fmt.Sprintf("retryBudget is used in src/client.ts (lines 14 and 41). The lock file pins zod 3.23.8 (integrity %s).", integrity))
}

func sevenArticles(s *scenario) {
	search := tool("search_posts", "Search the knowledge base's published posts.", harness.ReadOnly|harness.Network, "query")
	get := tool("get_article", "Fetch the full body of one article.", harness.ReadOnly|harness.Network, "id")
	s.start("seven-articles", "You answer questions about the user's knowledge base. Use the tools; cite the posts.",
		"Which of my published posts has this feature not been mentioned in yet?", search, get)
	var ids []string
	for i := 0; i < 7; i++ {
		ids = append(ids, fmt.Sprintf("post_%s", s.hex(6)))
	}
	s.step("Looking up the published posts.", callSpec{"search_posts", `{"query":"published"}`, "Published posts:\n" + strings.Join(ids, "\n") + "\n"})
	var mentions []string
	for i, id := range ids {
		body := s.prose(9000)
		marker := fmt.Sprintf("Section%s", strings.ToUpper(s.word(1))+s.word(7))
		body = body[:4000] + " " + marker + " " + body[4000:]
		mentions = append(mentions, marker)
		// The tool's own cut: JSON.stringify(result).slice(0, 8000).
		out, _ := json.Marshal(map[string]string{"id": id, "body": body})
		s.step(fmt.Sprintf("Reading article %d of 7.", i+1), callSpec{"get_article", fmt.Sprintf(`{"id":%q}`, id), string(out[:8000])})
	}
	final := s.step("Posts without a mention of the feature: " + strings.Join(ids[:3], ", ") + ". The others mention it in " + strings.Join(mentions[3:], ", ") + ".")
	final.Final = true
}

// answeredWithTools is the seed's case with no round limit reached: the
// model follows each article's related link to the next (the id is at the
// end of the article, after its body: the model needs the article whole to
// choose its next call), reads seven, and answers in round eight without a
// synthesis call, citing the sections where four of them mention the
// feature, each mention at a random place in its body.
func answeredWithTools(s *scenario) {
	get := tool("get_article", "Fetch the full body of one article.", harness.ReadOnly|harness.Network, "id")
	s.start("answered-with-tools", "You answer questions about the user's knowledge base. Use the tools; cite the posts.",
		"Which of my published posts has the offline-sync feature not been mentioned in yet? Start from the newest and follow the related links.", get)
	var ids []string
	for i := 0; i < 7; i++ {
		ids = append(ids, fmt.Sprintf("post_%s", s.hex(6)))
	}
	var without, mentions []string
	for i, id := range ids {
		body := s.prose(7900)
		if i%2 == 1 || i == 6 {
			marker := fmt.Sprintf("Section%s", strings.ToUpper(s.word(1))+s.word(7))
			at := s.rng.IntN(len(body))
			body = body[:at] + " offline sync is covered in " + marker + ". " + body[at:]
			mentions = append(mentions, fmt.Sprintf("%s (%s)", id, marker))
		} else {
			without = append(without, id)
		}
		var related []string
		if i+1 < len(ids) {
			related = []string{ids[i+1]}
		}
		arg := "latest"
		if i > 0 {
			arg = id
		}
		// About 8,000 characters each, the related link last: the tool's
		// own cut (JSON.stringify(result).slice(0, 8000)) never reaches it.
		s.step(fmt.Sprintf("Reading article %d.", i+1), callSpec{"get_article", fmt.Sprintf(`{"id":%q}`, arg), articleJSON(id, body, related, 8000)})
	}
	s.step("Posts without a mention of offline sync: " + strings.Join(without, ", ") + ". It is mentioned in " + strings.Join(mentions, ", ") + ".")
}

// articleJSON is an article as its tool returns it, its body shortened so
// that the whole is at most limit bytes.
func articleJSON(id, body string, related []string, limit int) string {
	for {
		out, _ := json.Marshal(struct {
			ID      string   `json:"id"`
			Body    string   `json:"body"`
			Related []string `json:"related,omitempty"`
		}{id, body, related})
		if len(out) <= limit || body == "" {
			return string(out)
		}
		body = strings.TrimSpace(body[:max(0, len(body)-(len(out)-limit))])
	}
}

// storeNouns are the object types of the store's GraphQL API in
// graphql-84, each with the fields its tools filter on.
var storeNouns = []struct{ one, many, fields string }{
	{"order", "orders", "customer, status (OPEN, CLOSED, CANCELLED), total, creation date"},
	{"customer", "customers", "name, email, country, tags, lifetime spend"},
	{"product", "products", "title, vendor, product type, tags, status"},
	{"variant", "variants", "product, SKU, price, barcode, weight"},
	{"collection", "collections", "title, rules, sort order, products"},
	{"inventory_item", "inventory_items", "SKU, location, quantity available, quantity committed"},
	{"location", "locations", "name, address, fulfils online orders"},
	{"fulfillment", "fulfillments", "order, status, tracking number, carrier"},
	{"refund", "refunds", "order, amount, reason, restock"},
	{"discount_code", "discount_codes", "code, value, usage count, start and end dates"},
	{"gift_card", "gift_cards", "code, balance, customer, expiry date"},
	{"draft_order", "draft_orders", "customer, line items, status, invoice sent"},
	{"shipping_zone", "shipping_zones", "countries, rates, weight conditions"},
	{"webhook", "webhooks", "topic, address, format"},
}

func graphql84(s *scenario) {
	// 14 object types × 6 operations, named and described the way GraphQL
	// admin APIs exposed as MCP tools are (list_orders, get_order, …),
	// with their filters in the schemas.
	type noun = struct{ one, many, fields string }
	human := func(s string) string { return strings.ReplaceAll(s, "_", " ") }
	verbs := []func(n noun) (name, doc string){
		func(n noun) (string, string) {
			return "get_" + n.one, fmt.Sprintf("Get one %s by id with its fields: %s.", human(n.one), n.fields)
		},
		func(n noun) (string, string) {
			return "list_" + n.many, fmt.Sprintf("List the %s of the store, newest first, one page at a time; filter by %s.", human(n.many), n.fields)
		},
		func(n noun) (string, string) {
			return "create_" + n.one, fmt.Sprintf("Create a %s. Required fields depend on the type: %s.", human(n.one), n.fields)
		},
		func(n noun) (string, string) {
			return "update_" + n.one, fmt.Sprintf("Update fields of an existing %s by id: %s.", human(n.one), n.fields)
		},
		func(n noun) (string, string) {
			return "delete_" + n.one, fmt.Sprintf("Delete a %s by id. This cannot be undone; related records are kept.", human(n.one))
		},
		func(n noun) (string, string) {
			return "count_" + n.many, fmt.Sprintf("Count the %s matching a filter on %s, without fetching them.", human(n.many), n.fields)
		},
	}
	var tools []harness.ToolSpec
	for _, n := range storeNouns {
		for _, verb := range verbs {
			name, doc := verb(n)
			schema := fmt.Sprintf(`{"type":"object","properties":{"id":{"type":"string","description":"The global id of the %s (gid://shop/%s/…)."},`+
				`"filter":{"type":"object","description":"GraphQL filter on %s fields: %s. Combine conditions with AND; dates are ISO 8601."},`+
				`"first":{"type":"integer","description":"Page size, at most 250."},"after":{"type":"string","description":"Cursor of the previous page's last edge."},`+
				`"fields":{"type":"array","items":{"type":"string"},"description":"Fields to return; default all scalar fields of the %s."}}}`,
				human(n.one), n.one, human(n.one), n.fields, human(n.one))
			tools = append(tools, harness.ToolSpec{Name: name, Description: doc + " Goes through the store's GraphQL Admin API and counts against its rate limit.",
				InputSchema: json.RawMessage(schema), Risk: harness.ReadOnly | harness.Network})
		}
	}
	s.start("graphql-84", "You operate the store's GraphQL API through tools.", "How many open orders does customer 4411 have, and what is the oldest one?", tools...)
	// Four pages of the customer's open orders, each followed by a look at
	// the oldest order of the page; the answer names the oldest overall.
	var oldest string
	for page := 0; page < 4; page++ {
		var edges []string
		pageOldest := ""
		for k := 0; k < 10; k++ {
			id := "ord_" + s.hex(8)
			edges = append(edges, fmt.Sprintf(`{"node":{"id":%q,"status":"OPEN","created":"2024-%02d-%02dT10:%02d:00Z","total":"%d.%02d"}}`, id, 12-3*page-k/4, 28-k, k, 20+s.rng.IntN(400), s.rng.IntN(100)))
			pageOldest = id
		}
		out := fmt.Sprintf(`{"data":{"orders":{"edges":[%s],"pageInfo":{"hasNextPage":%v,"endCursor":"cur_%s"}}}}`, strings.Join(edges, ","), page < 3, s.hex(6))
		after := ""
		if page > 0 {
			after = fmt.Sprintf(`,"after":"cur_page%d"`, page)
		}
		s.step(fmt.Sprintf("Fetching page %d of the open orders.", page+1), callSpec{"list_orders", fmt.Sprintf(`{"filter":{"customer":"4411","status":"OPEN"},"first":10%s}`, after), out})
		s.step("Checking the oldest order of this page.", callSpec{"get_order", fmt.Sprintf(`{"id":%q}`, pageOldest),
			fmt.Sprintf(`{"data":{"order":{"id":%q,"status":"OPEN","customer":{"id":"4411"},"lineItems":{"edges":[{"node":{"sku":"SKU-%s","quantity":%d}}]}}}}`, pageOldest, s.hex(5), 1+s.rng.IntN(4))})
		oldest = pageOldest
	}
	s.step(fmt.Sprintf("Customer 4411 has 40 open orders; the oldest is %s.", oldest))
}

func spillPaging(s *scenario) {
	s.start("spill-paging", codingSys, "Why did last night's import job fail? The log is logs/import.log.", readTool, grepTool)
	var lines []string
	failAt := 2300
	errLine := fmt.Sprintf("ERROR importer: batch %s rejected: constraint violation on orders_customer_fk (row %d)", s.hex(8), 88231)
	for i := 0; i < 3200; i++ {
		if i == failAt {
			lines = append(lines, errLine)
			continue
		}
		lines = append(lines, fmt.Sprintf("2024-05-0%d 03:%02d:%02d INFO importer: batch %s ok, %d rows", 1+i%9, i%60, (i*7)%60, s.hex(8), s.rng.IntN(5000)))
	}
	log := strings.Join(lines, "\n") + "\n"
	s.step("Reading the log.", callSpec{"read_file", `{"path":"logs/import.log"}`, log})
	s.step("Searching the log for errors.", callSpec{"grep", `{"pattern":"ERROR","path":"logs/import.log"}`, fmt.Sprintf("logs/import.log:%d:%s\n", failAt+1, errLine)})
	s.step("Reading the lines around the error.", callSpec{"read_file", fmt.Sprintf(`{"path":"logs/import.log","offset":"%d","limit":"40"}`, failAt-20), strings.Join(lines[failAt-20:failAt+20], "\n")})
	s.step("The import failed at row 88231: orders_customer_fk rejected the batch, so a customer row was missing.")
}

func buildLogTail(s *scenario) {
	s.start("build-log-tail", codingSys, "The build is red. Fix it.", bashTool, readTool, editTool)
	var b strings.Builder
	for b.Len() < 150_000 {
		fmt.Fprintf(&b, "[%4d/%4d] CC  obj/%s/%s.o\n", s.rng.IntN(2000), 2000, s.word(6), s.word(8))
	}
	fn := "parseManifestHeader"
	b.WriteString(fmt.Sprintf("internal/manifest/header.go:212:9: undefined: %s\nFAILED: build step compile-internal-manifest\nninja: build stopped: subcommand failed.\n", fn))
	s.step("Running the build to see the error.", callSpec{"bash", `{"command":"make build 2>&1"}`, b.String()})
	src := s.source(240, []string{"readManifest", "parseManifestHeaderV2", "checksum", "writeHeader", "validate", "openManifest", "closeManifest", "decodeFields", "parseManifestHeaderV1"})
	s.step("The error is undefined: parseManifestHeader at internal/manifest/header.go:212. Reading that file.", callSpec{"read_file", `{"path":"internal/manifest/header.go","offset":"190","limit":"40"}`, numbered(src, 190, 229)})
	s.step("Renaming the call to the existing parseManifestHeaderV2.", callSpec{"edit", `{"path":"internal/manifest/header.go","old":"parseManifestHeader(","new":"parseManifestHeaderV2("}`, "edited internal/manifest/header.go: 1 replacement"})
	s.step("Building again.", callSpec{"bash", `{"command":"make build 2>&1 | tail -3"}`, "[2000/2000] LINK bin/app\nbuild ok\n"})
	s.step("Fixed: internal/manifest/header.go:212 called the undefined parseManifestHeader; it now calls parseManifestHeaderV2 and the build passes.")
}

func overlappingReads(s *scenario) {
	s.start("overlapping-reads", codingSys, "Find where the session token is refreshed in server/session.go and explain the expiry logic.", readTool, grepTool)
	names := []string{"newSession", "loadSession", "refreshToken", "expireAfter", "touchSession", "saveSession", "deleteSession", "sessionCookie", "rotateKeys", "verifyToken", "issueToken", "parseClaims", "sessionStore", "gcSessions", "lockSession", "unlockSession"}
	src := s.source(400, names)
	reads := [][2]int{{1, 120}, {100, 220}, {50, 170}, {200, 320}, {1, 120}, {280, 400}, {150, 270}}
	for i, r := range reads {
		th := fmt.Sprintf("Reading server/session.go lines %d-%d.", r[0], r[1])
		if i > 0 {
			th = fmt.Sprintf("%s shows up; reading lines %d-%d for context.", names[(r[0]-1)/25], r[0], r[1])
		}
		s.step(th, callSpec{"read_file", fmt.Sprintf(`{"path":"server/session.go","offset":"%d","limit":"%d"}`, r[0], r[1]-r[0]+1), numbered(src, r[0], r[1])})
	}
	s.step("refreshToken (line 51) calls expireAfter (line 76) and verifyToken; tokens expire after the window set in issueToken.")
}

func stuckLoop(s *scenario) {
	s.start("stuck-loop", codingSys, "Make the flaky test TestCheckoutTotals pass.", bashTool, readTool)
	fail := fmt.Sprintf("--- FAIL: TestCheckoutTotals (0.02s)\n    totals_test.go:88: got 10499, want 10500 (rounding in applyDiscount_%s)\nFAIL\nexit status 1\n", s.hex(4))
	out := fail + s.prose(3000)
	for i := 0; i < 8; i++ {
		s.step("Running the test again.", callSpec{"bash", `{"command":"go test ./checkout -run TestCheckoutTotals"}`, out})
	}
	s.step("The test fails on rounding in applyDiscount; it needs a fix in the discount code, not more runs.")
}
