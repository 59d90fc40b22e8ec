package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/agentharness/harness"
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
}

func cmdTools(ctx context.Context, e *env, args []string) error {
	var (
		root    string
		jsonOut bool
		prompt  string
		tf      toolFlags
		mf      mcpFlags
	)
	fs := newFlagSet(e, "tools", "", "List the tools \"harness run\" would offer: the workspace tools, recall and the tools of the\n"+
		"MCP servers, with their risk and the bytes of their schema as sent to a model. With --select PROMPT,\n"+
		"also show which tools a turn on PROMPT is offered.")
	fs.StringVar(&root, "workspace", ".", "workspace root")
	fs.BoolVar(&jsonOut, "json", false, "print JSON instead of a table")
	fs.StringVar(&prompt, "select", "", "show the tools a turn on this prompt is offered")
	tf.register(fs)
	mf.register(fs)
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
	mcpTools, stop, err := mf.open(ctx, e, abs, builtin, readOnlyMode(&tf))
	if err != nil {
		return err
	}
	defer stop()

	var (
		rows  []toolRow
		specs []harness.ToolSpec
	)
	for _, t := range builtin {
		rows = append(rows, toolRow{Name: t.Spec.Name, Source: "builtin", Risk: t.Spec.Risk.String(), SchemaBytes: harness.SchemaBytes(t.Spec)})
		specs = append(specs, t.Spec)
	}
	for _, t := range mcpTools {
		rows = append(rows, toolRow{Name: t.Spec.Name, Source: "mcp", Risk: t.Spec.Risk.String(), SchemaBytes: harness.SchemaBytes(t.Spec)})
		specs = append(specs, t.Spec)
	}
	all := toolselect.Measure(specs)
	offered := all
	if prompt != "" {
		var sel harness.Selector = mf.selector()
		chosen := specs
		if sel != nil {
			if chosen, err = sel.Select(ctx, harness.NewConversation(""), prompt, specs); err != nil {
				return err
			}
		}
		in := map[string]bool{}
		for _, s := range chosen {
			in[s.Name] = true
		}
		for i := range rows {
			v := in[rows[i].Name]
			rows[i].Offered = &v
		}
		offered = toolselect.Measure(chosen)
	}

	if jsonOut {
		out := struct {
			Tools        []toolRow `json:"tools"`
			Count        int       `json:"count"`
			SchemaBytes  int       `json:"schema_bytes"`
			Offered      *int      `json:"offered,omitempty"`
			OfferedBytes *int      `json:"offered_schema_bytes,omitempty"`
		}{Tools: rows, Count: all.Tools, SchemaBytes: all.Bytes}
		if prompt != "" {
			out.Offered, out.OfferedBytes = &offered.Tools, &offered.Bytes
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	header := "NAME\tSOURCE\tRISK\tSCHEMA BYTES"
	if prompt != "" {
		header += "\tOFFERED"
	}
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		line := fmt.Sprintf("%s\t%s\t%s\t%d", r.Name, r.Source, r.Risk, r.SchemaBytes)
		if r.Offered != nil {
			mark := "-"
			if *r.Offered {
				mark = "yes"
			}
			line += "\t" + mark
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%d tools, %d schema bytes per request when all are offered\n", all.Tools, all.Bytes)
	if prompt != "" {
		fmt.Fprintf(e.stdout, "a turn on this prompt is offered %d tools, %d schema bytes per request\n", offered.Tools, offered.Bytes)
	}
	return nil
}
