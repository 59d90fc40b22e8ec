package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// block is one block of a coverage profile: its file (by import path),
// its span and whether the path ran it.
type block struct {
	file                     string
	line0, col0, line1, col1 int
	ran                      bool
}

// readProfile reads a text coverage profile.
func readProfile(name string) ([]block, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []block
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "mode:") || line == "" {
			continue
		}
		b, err := parseBlock(line)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, b)
	}
	return out, sc.Err()
}

// parseBlock reads one profile line: file:l0.c0,l1.c1 statements count.
func parseBlock(line string) (block, error) {
	file, rest, ok := strings.Cut(line, ":")
	f := strings.Fields(rest)
	if !ok || len(f) != 3 {
		return block{}, fmt.Errorf("not a profile line: %q", line)
	}
	var b block
	if _, err := fmt.Sscanf(f[0], "%d.%d,%d.%d", &b.line0, &b.col0, &b.line1, &b.col1); err != nil {
		return block{}, fmt.Errorf("not a profile line: %q", line)
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return block{}, fmt.Errorf("not a profile line: %q", line)
	}
	b.file, b.ran = file, n > 0
	return b, nil
}
