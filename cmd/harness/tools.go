package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/agentharness/harness/internal/toolschema"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/mcpflags"
	"github.com/agentharness/harness/tools/recall"
	"github.com/agentharness/harness/toolselect"
)

// toolRow is one line of "harness tools".
type toolRow struct {
	Name        string `json:"name"`
	Source      string `json:"source"`
	Risk        string `json:"risk"`
	SchemaBytes int    `json:"schema_bytes"`
	// Offered is set with --select: the tool is offered to a turn on that
	// prompt.
	Offered *bool `json:"offered,omitempty"`
	// Stub is set with --select and --defer-tools on a tool offered as a
	// stub (toolselect.Stub): its name, first sentence and parameter
	// names instead of its whole schema.
	Stub bool `json:"stub,omitempty"`
}

// toolsReport is what "harness tools" prints: the rows, the schema
// figures when every tool is offered and, with --select, when a turn on
// the prompt is offered its selection.
type toolsReport struct {
	rows     []toolRow
	all      toolselect.Schemas
	offered  toolselect.Schemas
	selected bool
}

// cmdTools runs "harness tools": it opens the tools "harness run" would
// offer, measures them and prints them as a table or JSON.
func cmdTools(ctx context.Context, e *env, args []string) error {
	var (
		root    string
		jsonOut bool
		prompt  string
		tf      toolFlags
		mf      mcpflags.Flags
	)
	fs := newFlagSet(e, "tools", "", "List the tools \"harness run\" would offer: the workspace tools, recall and the tools of the\n"+
		"MCP servers, with their risk and the bytes of their schema as sent to a model. With --select PROMPT,\n"+
		"also show which tools a turn on PROMPT is offered.")
	fs.StringVar(&root, "workspace", ".", "workspace root")
	fs.BoolVar(&jsonOut, "json", false, "print JSON instead of a table")
	fs.StringVar(&prompt, "select", "", "show the tools a turn on this prompt is offered")
	tf.register(fs)
	mf.Register(fs)
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("--workspace: %w", err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return fmt.Errorf("--workspace %s: not a directory", root)
	}
	ws, wsTools, _, err := tf.build(e, abs, harness.DefaultToolTimeout)
	if err != nil {
		return err
	}
	defer ws.Close()
	builtin := append(wsTools, recall.New(nil))
	mcpTools, stop, err := mf.Open(ctx, e.stderr, mcpClient(), abs, builtin, readOnlyMode(&tf), harness.DefaultToolTimeout)
	if err != nil {
		return err
	}
	defer stop()
	sel, err := mf.Selector(builtin)
	if err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	rep, err := measureTools(ctx, builtin, mcpTools, prompt, sel)
	if err != nil {
		return err
	}
	if jsonOut {
		return rep.printJSON(e)
	}
	return rep.printTable(e)
}

// measureTools lists the builtin and MCP tools with their schema sizes
// and, for a prompt, marks the ones sel offers a turn on it (all of them
// when sel is nil).
func measureTools(ctx context.Context, builtin, mcpTools []harness.Tool, prompt string, sel harness.Selector) (*toolsReport, error) {
	rep := &toolsReport{selected: prompt != ""}
	var specs []harness.ToolSpec
	for _, group := range []struct {
		source string
		tools  []harness.Tool
	}{{"builtin", builtin}, {"mcp", mcpTools}} {
		for _, t := range group.tools {
			rep.rows = append(rep.rows, toolRow{Name: t.Spec.Name, Source: group.source, Risk: t.Spec.Risk.String(), SchemaBytes: toolschema.Bytes(t.Spec.Name, t.Spec.Description, t.Spec.InputSchema)})
			specs = append(specs, t.Spec)
		}
	}
	rep.all = toolselect.Measure(specs)
	rep.offered = rep.all
	if !rep.selected {
		return rep, nil
	}
	chosen := specs
	if sel != nil {
		var err error
		if chosen, err = sel.Select(ctx, harness.NewConversation(""), prompt, specs); err != nil {
			return nil, err
		}
	}
	in := map[string]harness.ToolSpec{}
	for _, s := range chosen {
		in[s.Name] = s
	}
	for i := range rep.rows {
		got, v := in[rep.rows[i].Name]
		rep.rows[i].Offered = &v
		rep.rows[i].Stub = v && toolselect.Shortened(got, specs[i])
	}
	rep.offered = toolselect.Measure(chosen)
	return rep, nil
}

// printJSON prints the report as one indented JSON object.
func (rep *toolsReport) printJSON(e *env) error {
	out := struct {
		Tools        []toolRow `json:"tools"`
		Count        int       `json:"count"`
		SchemaBytes  int       `json:"schema_bytes"`
		Offered      *int      `json:"offered,omitempty"`
		OfferedBytes *int      `json:"offered_schema_bytes,omitempty"`
	}{Tools: rep.rows, Count: rep.all.Tools, SchemaBytes: rep.all.Bytes}
	if rep.selected {
		out.Offered, out.OfferedBytes = &rep.offered.Tools, &rep.offered.Bytes
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// printTable prints the report as an aligned table and a summary line.
func (rep *toolsReport) printTable(e *env) error {
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	header := "NAME\tSOURCE\tRISK\tSCHEMA BYTES"
	if rep.selected {
		header += "\tOFFERED"
	}
	fmt.Fprintln(tw, header)
	for _, r := range rep.rows {
		line := fmt.Sprintf("%s\t%s\t%s\t%d", r.Name, r.Source, r.Risk, r.SchemaBytes)
		if r.Offered != nil {
			mark := "-"
			switch {
			case r.Stub:
				mark = "stub"
			case *r.Offered:
				mark = "yes"
			}
			line += "\t" + mark
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%d tools, %d schema bytes per request when all are offered\n", rep.all.Tools, rep.all.Bytes)
	if rep.selected {
		fmt.Fprintf(e.stdout, "a turn on this prompt is offered %d tools, %d schema bytes per request\n", rep.offered.Tools, rep.offered.Bytes)
	}
	return nil
}
