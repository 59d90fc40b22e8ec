package main

import (
	"github.com/agentharness/harness/internal/mcpflags"
	"github.com/agentharness/harness/tools/workspace"
)

// mcpClient names harness to the MCP servers it starts.
func mcpClient() mcpflags.Client { return mcpflags.Client{Name: "harness", Version: version} }

// readOnlyMode reports whether the tool flags ask for read-only mode.
func readOnlyMode(t *toolFlags) bool { return t.modeSet && t.mode == workspace.ModeReadOnly }
