package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/numfmt"
	"github.com/agentharness/harness/provider/catalog"
	"github.com/agentharness/harness/proxy"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/sqlite"
	"github.com/agentharness/harness/tools/recall"
)

// logUsage documents "harness log".
const logUsage = `Usage:
  harness log list [--workspace DIR] [--db PATH] [--json]
  harness log show ID [--turn N] [--workspace DIR] [--db PATH] [--json]
  harness log delete ID [--workspace DIR] [--db PATH]

The transcript store keeps in full every conversation "harness proxy", the
launchers ("harness claude", codex, gemini, opencode) and "harness run" had.
list   shows the stored conversations, a fork the proxy made with its
       parent and turn (--json: "forked_from").
show   shows, for each tool result, what the tool returned and what the model
       saw of it: sizes, the guards' cuts and markers, and what per-turn
       policies (the turn budget, compaction) showed of it in each request;
       and what each request offered beside the transcript: the system
       prompt's size and the tool schemas sent (count and bytes); and the
       requests answered more than 5 minutes after the answer before, when
       the provider's prompt cache had expired (--json: each request's
       answer time and pause); and each turn's context messages: the
       user-role messages a client sent with the input that are not the
       user's words (Codex's AGENTS.md and environment, a skill's text,
       Gemini CLI's session context), with their size and whether they
       came before or after the input (--json: "turns"); and, for a
       conversation the proxy forked (a history that diverged from the
       stored one under the same key), its parent and the turn where it
       diverged (--json: "forked_from").
delete removes a conversation and its spill folder.`

// cmdLog reads the transcript store.
func cmdLog(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		// Asked for nothing: the usage is the error's explanation.
		fmt.Fprintln(e.stderr, logUsage)
		return fmt.Errorf("%w: want a subcommand: list, show or delete", errUsage)
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(e.stdout, logUsage) // help asked for is output
		return nil
	}
	switch args[0] {
	case "list":
		return cmdLogList(ctx, e, args[1:])
	case "show":
		return cmdLogShow(ctx, e, args[1:])
	case "delete":
		return cmdLogDelete(ctx, e, args[1:])
	}
	return fmt.Errorf("%w: unknown subcommand %q (want list, show or delete)", errUsage, args[0])
}

// storeFlags locate the transcript store.
type storeFlags struct {
	workspace, db string
}

func (f *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.workspace, "workspace", ".", "workspace root whose .harness/ holds the store")
	fs.StringVar(&f.db, "db", "", "transcript store: a file (default WORKSPACE/"+defaultDBPath+") or a postgres:// URL")
}

// path is the store's file.
func (f *storeFlags) path() string {
	if f.db != "" {
		return f.db
	}
	return filepath.Join(f.workspace, filepath.FromSlash(defaultDBPath))
}

// storeArgs returns the flags that point another command at the store a
// run used: " --workspace DIR" unless DIR is the working directory, and
// " --db PATH" when one was given, so the hints a run prints work when
// pasted as they are. A postgres:// URL is printed without its password
// (libpq's PGPASSWORD or ~/.pgpass supplies it again).
func storeArgs(workspace, db string) string {
	var out string
	if wd, err := os.Getwd(); err != nil || filepath.Clean(workspace) != wd {
		out += " --workspace " + shellQuote(workspace)
	}
	if db != "" {
		out += " --db " + shellQuote(withoutPassword(db))
	}
	return out
}

// withoutPassword returns db with the password of a postgres:// URL
// removed; anything else is returned as it is.
func withoutPassword(db string) string {
	if !isDSN(db) {
		return db
	}
	u, err := url.Parse(db)
	if err != nil {
		return "postgres://…" // unparsable: print nothing of it
	}
	if _, has := u.User.Password(); has {
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	if q.Has("password") {
		q.Del("password")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and the punctuation of ordinary paths.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@,=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// defaultDBPath is where the CLI keeps a workspace's transcript store,
// relative to the workspace, beside its spill folder (spill.Folder).
const defaultDBPath = ".harness/harness.db"

// openStore opens the workspace's transcript store; deleting a
// conversation also removes its spill folder. With mustExist, a missing
// file is an error instead of a new store.
func openStore(ctx context.Context, f *storeFlags, mustExist bool) (store.DB, error) {
	return openDB(ctx, f.path(), f.workspace, mustExist, false)
}

// openStoreToRead opens the store "log list" and "log show" read: a
// SQLite file read-only (sqlite.Options.ReadOnly), so a store on a
// read-only file system or in a folder the user may not write is read
// all the same, unless its schema is older than this harness writes (it
// is then opened writable once, to bring it up to date); a PostgreSQL
// database as openStore opens it.
func openStoreToRead(ctx context.Context, f *storeFlags) (store.DB, error) {
	p := f.path()
	if isDSN(p) {
		return openStore(ctx, f, true)
	}
	if _, err := os.Stat(p); err != nil {
		return nil, missingStore(p, err)
	}
	st, err := sqlite.Open(ctx, p, &sqlite.Options{ReadOnly: true})
	if errors.Is(err, sqlite.ErrOutdated) {
		return openStore(ctx, f, true)
	}
	if err != nil {
		return nil, err
	}
	return st, nil
}

// recallLookup lets the recall tool fetch results a resumed conversation
// holds only as model copies.
func recallLookup(s store.ResultFetcher) recall.LookupFunc {
	return func(ctx context.Context, convID, callID string) (*harness.ToolResult, error) {
		res, err := s.FullResult(ctx, convID, callID)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		return res, err
	}
}

func cmdLogList(ctx context.Context, e *env, args []string) error {
	var sf storeFlags
	fs := newFlagSet(e, "log list", "", "List the stored conversations, most recently updated first.")
	sf.register(fs)
	jsonOut := fs.Bool("json", false, "print the list as JSON")
	tenant := tenantFlag(fs, "only the conversations of this proxy tenant")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, pos[0])
	}
	s, err := openStoreToRead(ctx, &sf)
	if err != nil {
		return err
	}
	defer s.Close()
	list, err := s.List(ctx)
	if err != nil {
		return err
	}
	if *tenant != "" {
		list = slices.DeleteFunc(list, func(c store.Summary) bool { return !ofTenant(c.ID, *tenant) })
	}
	listed, err := withForks(ctx, s, list)
	if err != nil {
		return err
	}
	if *jsonOut {
		return logJSON(e.stdout, listed)
	}
	if len(listed) == 0 {
		fmt.Fprintf(e.stdout, "no conversations in %s\n", s.Path())
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUPDATED\tTURNS\tROUNDS\tCALLS\tRETURNED\tSHOWN\tTOKENS IN\tCACHED\tOUT\tTITLE")
	for _, c := range listed {
		title := c.Title
		if f := c.ForkedFrom; f != nil {
			title = fmt.Sprintf("fork of %s at turn %d: %s", f.Conversation, f.Turn, title)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, c.Updated.Local().Format("2006-01-02 15:04"),
			c.Turns, c.Rounds, c.Calls, logBytes(c.ResultBytes), logBytes(c.ModelBytes),
			numfmt.Thousands(int64(c.Usage.Input)), numfmt.Thousands(int64(c.Usage.Cached)), numfmt.Thousands(int64(c.Usage.Output)), title)
	}
	return tw.Flush()
}

// logListed is one conversation as "log list --json" prints it: the
// store's summary and, for a conversation the proxy forked, where it
// came from ("forked_from", as "log show --json" prints it).
type logListed struct {
	store.Summary
	ForkedFrom *logFork `json:"forked_from,omitempty"`
}

// withForks returns list with each fork's link to its parent, read from
// the store's fork links.
func withForks(ctx context.Context, s store.Store, list []store.Summary) ([]logListed, error) {
	forks, err := s.Forks(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("log list: %w", err)
	}
	byID := make(map[string]store.Fork, len(forks))
	for _, f := range forks {
		byID[f.Conversation] = f
	}
	out := make([]logListed, len(list))
	for i, c := range list {
		out[i].Summary = c
		if f, ok := byID[c.ID]; ok {
			out[i].ForkedFrom = newLogFork(f)
		}
	}
	return out, nil
}

func cmdLogShow(ctx context.Context, e *env, args []string) error {
	var sf storeFlags
	fs := newFlagSet(e, "log show", "ID", "Show a conversation turn by turn: for each tool result, what the tool returned and\n"+
		"what the model saw of it (sizes in characters, cuts, markers), side by side.")
	sf.register(fs)
	turn := fs.Int("turn", 0, "show only this turn (from 1)")
	jsonOut := fs.Bool("json", false, "print the turns, calls and requests as JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: want one conversation id (see \"harness log list\")", errUsage)
	}
	if *turn < 0 {
		return fmt.Errorf("%w: --turn %d: turns count from 1", errUsage, *turn)
	}
	id := pos[0]
	s, err := openStoreToRead(ctx, &sf)
	if err != nil {
		return err
	}
	defer s.Close()
	// No result payloads: showing a conversation that holds a huge result
	// costs what its outline costs; sizes, cuts and markers come from Calls.
	conv, err := s.LoadOutline(ctx, id)
	if err != nil {
		return unknownConversation(err, id, s.Path())
	}
	if *turn > len(conv.Turns) {
		return fmt.Errorf("%w: --turn %d: conversation %s has %d turn(s)", errUsage, *turn, id, len(conv.Turns))
	}
	calls, err := s.Calls(ctx, id, *turn)
	if err != nil {
		return err
	}
	reqs, err := s.Requests(ctx, id, *turn)
	if err != nil {
		return err
	}
	events, err := s.Events(ctx, id, 0)
	if err != nil {
		return err
	}
	fork, err := forkOf(ctx, s, id, events)
	if err != nil {
		return err
	}
	if *jsonOut {
		out := struct {
			Conversation string             `json:"conversation"`
			ForkedFrom   *logFork           `json:"forked_from,omitempty"`
			Turn         int                `json:"turn,omitempty"`
			Turns        []logTurn          `json:"turns"`
			Calls        []store.CallRecord `json:"calls"`
			logRequests
		}{id, fork, *turn, newLogTurns(conv, *turn), calls, newLogRequests(conv, reqs)}
		if out.Calls == nil {
			out.Calls = []store.CallRecord{}
		}
		return logJSON(e.stdout, out)
	}
	writeConversation(e.stdout, conv, fork, calls, reqs, *turn)
	writeResent(e.stdout, events, *turn)
	return nil
}

// logFork is where a conversation the proxy forked comes from, read from
// the store's fork link (store.Fork; "log show --json": "forked_from"):
//
//	{"conversation": "px-8f3a…", "turn": 2, "round": 0, "shared_turns": 1}
type logFork struct {
	// Conversation is the parent's id.
	Conversation string `json:"conversation"`
	// Turn and Round are the history's position where it diverged from
	// the parent's (Round 0: the turn's input, else that round's calls).
	Turn  int `json:"turn"`
	Round int `json:"round"`
	// SharedTurns counts the parent's turns the fork holds again.
	SharedTurns int `json:"shared_turns"`
}

// position names where the fork diverged within its turn.
func (f *logFork) position() string {
	if f.Round == 0 {
		return "(its input)"
	}
	return fmt.Sprintf("round %d (its calls)", f.Round)
}

// newLogFork is fork link f as "log" prints it.
func newLogFork(f store.Fork) *logFork {
	return &logFork{Conversation: f.Parent, Turn: f.Turn, Round: f.Round, SharedTurns: f.SharedTurns}
}

// forkOf returns where conversation id was forked from, or nil when it is
// no fork: its fork link, or else the proxy.ForkPolicy event among its
// events that a proxy wrote before stores kept fork links.
func forkOf(ctx context.Context, s store.Store, id string, events []harness.Event) (*logFork, error) {
	forks, err := s.Forks(ctx, id)
	if err != nil {
		return nil, err
	}
	if len(forks) > 0 {
		return newLogFork(forks[0]), nil
	}
	for _, e := range events {
		if e.Kind != harness.EventPolicy || e.Policy != proxy.ForkPolicy {
			continue
		}
		parent, _ := e.Data["parent"].(string)
		if parent == "" {
			continue
		}
		f := &logFork{Conversation: parent, Turn: e.Turn, Round: e.Round}
		if n, ok := e.Data["shared_turns"].(float64); ok {
			f.SharedTurns = int(n)
		}
		return f, nil
	}
	return nil, nil
}

// logTurn is one turn as "log show --json" prints it, in its "turns"
// array (every turn, or only the one --turn names):
//
//	{"index": 1, "outcome": "answered", "input": "fix the test",
//	 "context": [{"text": "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>", "after_input": false}],
//	 "rounds": 2, "started": "2026-03-04T09:00:00Z", "ended": "2026-03-04T09:01:10Z"}
type logTurn struct {
	// Index counts turns from 1.
	Index int `json:"index"`
	// Outcome is how the turn ended (harness.Outcome), "unfinished" for
	// a turn that did not end, as the text output says.
	Outcome string `json:"outcome"`
	// Input is the user's words, in full.
	Input string `json:"input"`
	// Context holds the turn's context messages (harness.Turn.Context) in
	// the order the store keeps them; omitted when the turn has none, as
	// every turn stored before the stores kept them.
	Context []logContext `json:"context,omitempty"`
	// Rounds counts the turn's model calls.
	Rounds int `json:"rounds"`
	// Started and Ended are the turn's times; omitted when not stored
	// (Ended, for a turn that did not end).
	Started time.Time `json:"started,omitzero"`
	Ended   time.Time `json:"ended,omitzero"`
}

// logContext is one context message of a turn: its full text, and
// whether the client sent it after the input (false: before it). Unlike
// harness.ContextMessage's own encoding, after_input is always present,
// so that a script need not know the default.
type logContext struct {
	Text       string `json:"text"`
	AfterInput bool   `json:"after_input"`
}

// newLogTurns returns the turns of conv for "log show --json": all of
// them, or only turn only when it is not 0. It never returns nil, so the
// array is present (empty) for a conversation with no turns.
func newLogTurns(conv *harness.Conversation, only int) []logTurn {
	out := []logTurn{}
	for _, t := range conv.Turns {
		if only != 0 && t.Index != only {
			continue
		}
		lt := logTurn{Index: t.Index, Outcome: logOutcome(t.Outcome), Input: t.Input,
			Rounds: len(t.Rounds), Started: t.Started, Ended: t.Ended}
		for _, cm := range t.Context {
			lt.Context = append(lt.Context, logContext{Text: cm.Text, AfterInput: cm.AfterInput})
		}
		out = append(out, lt)
	}
	return out
}

// logRequests is what "log show --json" says of the requests: the system
// prompt, each request's sizes, and each distinct tool list's names once.
type logRequests struct {
	// SystemPrompt is the system prompt of the first recorded request;
	// SystemPrompts counts the distinct ones.
	SystemPrompt      string       `json:"system_prompt"`
	SystemPromptBytes int          `json:"system_prompt_bytes"`
	SystemPrompts     int          `json:"system_prompts"`
	Requests          []logRequest `json:"requests"`
	// ToolSets names the tools of each distinct list, by its hash.
	ToolSets map[string][]string `json:"tool_sets"`
}

// logRequest is one request: what it offered and how large that was.
// Tools and ToolBytes come from the stored request, or from the round's
// figures when the request predates request recording (Recorded false).
type logRequest struct {
	Turn        int    `json:"turn"`
	Round       int    `json:"round"`
	Final       bool   `json:"final,omitempty"`
	Recorded    bool   `json:"recorded"`
	SystemBytes int    `json:"system_bytes"`
	Tools       int    `json:"tools"`
	ToolBytes   int    `json:"tool_bytes"`
	ToolSet     string `json:"tool_set,omitempty"`
	// Answered is when the request's response arrived (Round.Answered;
	// zero for a round stored without it), and PauseSeconds the time from
	// the conversation's previous answer to it, when both are known.
	Answered     time.Time `json:"answered,omitzero"`
	PauseSeconds float64   `json:"pause_seconds,omitempty"`
}

func newLogRequests(conv *harness.Conversation, reqs []store.Request) logRequests {
	out := logRequests{Requests: []logRequest{}, ToolSets: map[string][]string{}}
	stats := map[[2]int]harness.RequestStats{}
	answered := map[[2]int]time.Time{}
	for _, t := range conv.Turns {
		for _, r := range t.Rounds {
			stats[[2]int{t.Index, r.Index}] = r.Stats
			answered[[2]int{t.Index, r.Index}] = r.Answered
		}
	}
	pauses := answerPauses(conv)
	prompts := map[string]bool{}
	first := true
	for _, q := range reqs {
		lr := logRequest{Turn: q.Turn, Round: q.Round, Final: q.Final, Recorded: q.Recorded,
			SystemBytes: q.SystemBytes, Tools: len(q.Tools), ToolBytes: q.ToolBytes, ToolSet: q.ToolSet}
		if !q.Recorded {
			st := stats[[2]int{q.Turn, q.Round}]
			lr.Tools, lr.ToolBytes = st.Tools, st.ToolBytes
		}
		lr.Answered = answered[[2]int{q.Turn, q.Round}]
		lr.PauseSeconds = pauses[[2]int{q.Turn, q.Round}].Seconds()
		out.Requests = append(out.Requests, lr)
		if !q.Recorded {
			continue
		}
		if first {
			out.SystemPrompt, out.SystemPromptBytes, first = q.System, q.SystemBytes, false
		}
		prompts[q.System] = true
		if q.ToolSet != "" {
			out.ToolSets[q.ToolSet] = q.ToolNames()
		}
	}
	out.SystemPrompts = len(prompts)
	return out
}

func cmdLogDelete(ctx context.Context, e *env, args []string) error {
	var sf storeFlags
	fs := newFlagSet(e, "log delete", "ID", "Delete a stored conversation and its spill folder.")
	sf.register(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: want one conversation id", errUsage)
	}
	s, err := openStore(ctx, &sf, true)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.Delete(ctx, pos[0]); err != nil {
		return unknownConversation(err, pos[0], s.Path())
	}
	fmt.Fprintf(e.stdout, "deleted %s\n", pos[0])
	return nil
}

// unknownConversation says, for a conversation id the store at path does
// not hold, where the ids are listed; other errors pass as they are.
func unknownConversation(err error, id, path string) error {
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no conversation %s in %s (harness log list lists them; --workspace DIR or --db FILE reads another store)", id, path)
	}
	return err
}

// writeConversation prints the turns of conv (only turn only, when not 0)
// with what their requests offered and a table of their tool results.
func writeConversation(w io.Writer, conv *harness.Conversation, fork *logFork, calls []store.CallRecord, reqs []store.Request, only int) {
	fmt.Fprintf(w, "conversation %s: %d turn(s)\n", conv.ID, len(conv.Turns))
	if fork != nil {
		// The proxy saw this history diverge from the one stored under
		// the same key; the shared turns are held here again.
		fmt.Fprintf(w, "forked from conversation %s at turn %d %s; %d shared turn(s)\n",
			fork.Conversation, fork.Turn, fork.position(), fork.SharedTurns)
	}
	byTurn := map[int][]store.CallRecord{}
	for _, c := range calls {
		byTurn[c.Turn] = append(byTurn[c.Turn], c)
	}
	requests := map[[2]int]*store.Request{}
	for i := range reqs {
		requests[[2]int{reqs[i].Turn, reqs[i].Round}] = &reqs[i]
	}
	perTurnSystem := writeSystemPrompt(w, reqs)
	pauses := answerPauses(conv)
	for _, t := range conv.Turns {
		if only != 0 && t.Index != only {
			continue
		}
		u := t.Usage
		fmt.Fprintf(w, "\nturn %d · %s · %d round(s) · tokens in %s (cached %s), out %s\n", t.Index, logOutcome(t.Outcome),
			len(t.Rounds), numfmt.Thousands(int64(u.Input)), numfmt.Thousands(int64(u.Cached)), numfmt.Thousands(int64(u.Output)))
		fmt.Fprintf(w, "  input: %s\n", logLine(t.Input, 200))
		writeContext(w, t)
		// The evidence of each request: what the turn's tool messages
		// cost in every model call, the figure a per-call log cannot show.
		var ev []string
		for _, r := range t.Rounds {
			s := fmt.Sprintf("r%d %s", r.Index, numfmt.Thousands(int64(r.Stats.EvidenceChars)))
			if r.Final {
				s += " (final)"
			}
			ev = append(ev, s)
		}
		if len(ev) > 0 {
			fmt.Fprintf(w, "  evidence chars per request: %s\n", strings.Join(ev, ", "))
		}
		writeOffered(w, t, requests, perTurnSystem)
		writeColdAnswers(w, t, pauses)
		tc := byTurn[t.Index]
		if len(tc) == 0 {
			fmt.Fprintln(w, "  no tool calls")
		} else {
			writeCalls(w, tc)
		}
		if a := t.Answer(); a != "" {
			fmt.Fprintf(w, "  answer: %s\n", logLine(a, 200))
		}
	}
}

// writeResent prints the results a client re-sent under the call id of a
// recorded round with other content (proxy.ResentPolicy events): the
// upstream got the new content, the round keeps the first.
func writeResent(w io.Writer, events []harness.Event, only int) {
	for _, e := range events {
		if e.Kind != harness.EventPolicy || e.Policy != proxy.ResentPolicy || e.Call == nil || (only != 0 && e.Turn != only) {
			continue
		}
		size := 0
		if e.Result != nil {
			size = e.Result.BytesIn
		}
		fmt.Fprintf(w, "turn %d round %d: call %s re-sent by the client with other content (%s); the upstream got it, the round above keeps the first, and the store's proxy-resent event the new text\n",
			e.Turn, e.Round, e.Call.ID, logBytes(int64(size)))
	}
}

// writeContext prints one line per context message of t (the user-role
// messages the client sent with the input that are not the user's words),
// numbered in the order the store keeps them, with its size in characters
// and its place beside the input, so that a reader sees what else the
// turn's first request carried. A turn without context prints nothing.
func writeContext(w io.Writer, t *harness.Turn) {
	for i, cm := range t.Context {
		where := "before the input"
		if cm.AfterInput {
			where = "after the input"
		}
		fmt.Fprintf(w, "  context %d (%s, %s chars): %s\n", i+1, where,
			numfmt.Thousands(int64(utf8.RuneCountInString(cm.Text))), logLine(cm.Text, 200))
	}
}

// answerPauses gives, for each round (turn, round) whose answer time is
// stored, the time since the conversation's previous stored answer (a
// round of the turn before, for a turn's first round); rounds stored
// without a time, and the conversation's first answer, have none.
func answerPauses(conv *harness.Conversation) map[[2]int]time.Duration {
	out := map[[2]int]time.Duration{}
	var prev time.Time
	for _, t := range conv.Turns {
		for _, r := range t.Rounds {
			if !r.Answered.IsZero() && !prev.IsZero() && r.Answered.After(prev) {
				out[[2]int{t.Index, r.Index}] = r.Answered.Sub(prev)
			}
			prev = r.Answered
		}
	}
	return out
}

// writeColdAnswers names the rounds of t whose answer came more than the
// providers' default cache lifetime (catalog.DefaultCacheLifetime) after the one
// before: the requests that found the prompt cache expired, where the
// compaction's idle clear runs.
func writeColdAnswers(w io.Writer, t *harness.Turn, pauses map[[2]int]time.Duration) {
	var cold []string
	for _, r := range t.Rounds {
		if d := pauses[[2]int{t.Index, r.Index}]; d > catalog.DefaultCacheLifetime {
			cold = append(cold, fmt.Sprintf("r%d %s", r.Index, d.Round(time.Second)))
		}
	}
	if len(cold) > 0 {
		fmt.Fprintf(w, "  answered more than %s after the answer before (the prompt cache had expired): %s\n", catalog.DefaultCacheLifetime, strings.Join(cold, ", "))
	}
}

// writeSystemPrompt prints the size of the system prompt the requests
// sent, and whether the store recorded it. It returns true when the
// prompt changed between requests, so that turns print their own.
func writeSystemPrompt(w io.Writer, reqs []store.Request) bool {
	var (
		recorded, missing int
		first             *store.Request
		changed           bool
	)
	for i := range reqs {
		q := &reqs[i]
		if !q.Recorded {
			missing++
			continue
		}
		recorded++
		if first == nil {
			first = q
		} else if q.System != first.System {
			changed = true
		}
	}
	switch {
	case recorded == 0 && missing == 0:
		return false
	case recorded == 0:
		fmt.Fprintln(w, "system prompt: not recorded (stored before request recording: neither the system prompt nor the tool schemas were kept)")
		return false
	case changed:
		fmt.Fprint(w, "system prompt: changes between requests (sizes per turn below)")
	case first.SystemBytes == 0:
		fmt.Fprint(w, "system prompt: none")
	default:
		fmt.Fprintf(w, "system prompt: %s, the same in every request", logBytes(int64(first.SystemBytes)))
	}
	if missing > 0 {
		fmt.Fprintf(w, " (%d request(s) stored before request recording)", missing)
	}
	fmt.Fprintln(w)
	return changed
}

// writeOffered prints, for each request of turn t, how many tool schemas
// it sent and their bytes (and the system prompt's size when it changes
// between requests). A request stored before request recording shows the
// round's own figures, which were always kept.
func writeOffered(w io.Writer, t *harness.Turn, requests map[[2]int]*store.Request, system bool) {
	var tools, sys []string
	for _, r := range t.Rounds {
		q := requests[[2]int{t.Index, r.Index}]
		n, b := r.Stats.Tools, r.Stats.ToolBytes
		if q != nil && q.Recorded {
			n, b = len(q.Tools), q.ToolBytes
			sys = append(sys, fmt.Sprintf("r%d %s", r.Index, logBytes(int64(q.SystemBytes))))
		}
		s := fmt.Sprintf("r%d none", r.Index)
		if n > 0 {
			s = fmt.Sprintf("r%d %d (%s)", r.Index, n, logBytes(int64(b)))
		}
		if r.Final {
			s += " (final)"
		}
		tools = append(tools, s)
	}
	if len(tools) > 0 {
		fmt.Fprintf(w, "  tool schemas per request: %s\n", strings.Join(tools, ", "))
	}
	if system && len(sys) > 0 {
		fmt.Fprintf(w, "  system prompt per request: %s\n", strings.Join(sys, ", "))
	}
}

// writeCalls prints one row per result: what the tool returned beside
// what the model saw of it, then the markers the model read.
func writeCalls(w io.Writer, calls []store.CallRecord) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  ROUND\tCALL\tTOOL\tRETURNED\tMODEL COPY\tGUARDS\tIN REQUESTS")
	for _, c := range calls {
		tool := c.Tool
		switch {
		case c.TimedOut:
			tool += " (timed out)"
		case c.IsError:
			tool += " (error)"
		}
		returned := numfmt.Thousands(int64(c.FullChars)) + " ch"
		if c.FullBytes != c.FullChars {
			returned += " / " + logBytes(int64(c.FullBytes))
		}
		model := "= returned"
		if c.ModelChars != c.FullChars || c.ModelBytes != c.FullBytes || len(c.Cuts) > 0 {
			model = numfmt.Thousands(int64(c.ModelChars)) + " ch"
		}
		var guards []string
		for _, cut := range c.Cuts {
			g := string(cut.Kind)
			if cut.By != "" {
				g = cut.By + ": " + g
			}
			if cut.Of != "" {
				g += " of " + cut.Of
			}
			if cut.Locator != "" {
				g += " → " + cut.Locator
			}
			guards = append(guards, g)
		}
		var views []string
		for _, v := range c.Views {
			size := logBytes(int64(v.BytesOut))
			if v.Unit != "" {
				size = numfmt.Thousands(int64(v.SizeOut)) + " " + logUnit(v.Unit)
			}
			views = append(views, fmt.Sprintf("r%d: %s %s", v.Request, size, v.Kind))
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Round, c.CallID, tool, returned, model, logDash(strings.Join(guards, "; ")), logDash(strings.Join(views, ", ")))
	}
	tw.Flush()
	for _, c := range calls {
		if c.Marker != "" {
			fmt.Fprintf(w, "    %s guard marker: %s\n", c.CallID, logLine(c.Marker, 240))
		}
		seen := map[string]bool{}
		for _, v := range c.Views {
			if v.Marker == "" || seen[v.Marker] {
				continue
			}
			seen[v.Marker] = true
			fmt.Fprintf(w, "    %s %s marker (r%d): %s\n", c.CallID, v.By, v.Request, logLine(v.Marker, 240))
		}
	}
}

func logOutcome(o harness.Outcome) string {
	if o == "" {
		return "unfinished"
	}
	return string(o)
}

func logUnit(u string) string {
	if u == "chars" {
		return "ch"
	}
	return u
}

func logDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// logLine shows s on one line, at most n characters, saying how much was
// left out.
func logLine(s string, n int) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ⏎ ")), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + fmt.Sprintf("… (+%d chars)", len(r)-n)
}

// logBytes is an exact byte count.
func logBytes(n int64) string { return numfmt.Thousands(n) + " B" }

func logJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}

// openRunStore opens the transcript store of "harness run" and returns the
// conversation to run: the stored one named by --conversation, or a new
// one. With --no-store the store is nil and the conversation new.
func openRunStore(ctx context.Context, cfg *runConfig) (store.DB, *harness.Conversation, error) {
	if cfg.noStore {
		if cfg.conversation != "" {
			return nil, nil, fmt.Errorf("%w: --conversation needs the store; drop --no-store", errUsage)
		}
		return nil, harness.NewConversation(""), nil
	}
	sf := &storeFlags{workspace: cfg.workspace, db: cfg.db}
	// Resuming needs an existing store; a new conversation creates it.
	st, err := openStore(ctx, sf, cfg.conversation != "")
	if err != nil {
		return nil, nil, fmt.Errorf("%w (choose another file with --db, or run without recording with --no-store)", err)
	}
	if cfg.conversation == "" {
		return st, harness.NewConversation(""), nil
	}
	conv, err := st.Load(ctx, cfg.conversation)
	if err != nil {
		st.Close()
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil, fmt.Errorf("--conversation %s: not in %s (see \"harness log list\")", cfg.conversation, st.Path())
		}
		return nil, nil, err
	}
	return st, conv, nil
}

// recallOptions lets recall fetch the payloads a resumed conversation was
// loaded without; nil without a store.
func recallOptions(st store.DB) *recall.Options {
	if st == nil {
		return nil
	}
	return &recall.Options{Lookup: recallLookup(st)}
}

// closeRunStore closes the store after a run, saying so when events could
// not be stored (the transcript itself fails the run instead).
func closeRunStore(e *env, st store.DB) {
	if st == nil {
		return
	}
	if err := st.EventErr(); err != nil {
		fmt.Fprintf(e.stderr, "warning: some events were not stored: %v\n", err)
	}
	if err := st.Close(); err != nil {
		fmt.Fprintf(e.stderr, "warning: closing the transcript store: %v\n", err)
	}
}
