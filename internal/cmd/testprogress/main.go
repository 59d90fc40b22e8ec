// Command testprogress reads `go test -json` on standard input and prints
// one line per finished package (ok/FAIL, time, tests passed), the whole
// output of every failed test or package at once, a "running:" line naming
// each unfinished package and its longest-running test whenever nothing was
// printed for 30 seconds, and a closing summary. It exits 1 when a test or
// a build failed, so CI fails with it:
//
//	go test -json -race ./... | go run ./internal/cmd/testprogress
//
// Lines that are not test2json events (go's own messages) are copied as
// they come.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"time"
)

// quietAfter is how long the output may stay silent before a "running:"
// line says what the suite is waiting for.
const quietAfter = 30 * time.Second

func main() {
	if !run(os.Stdin, os.Stdout, quietAfter, 5*time.Second) {
		os.Exit(1)
	}
}

// run copies in to out as progress lines and reports whether every package
// passed. A tick every tickEvery lets the silent stretches be reported.
func run(in io.Reader, out io.Writer, quiet, tickEvery time.Duration) bool {
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		r := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				lines <- bytes.TrimRight(line, "\r\n")
			}
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				readErr <- err
				close(lines)
				return
			}
		}
	}()
	p := newProgress(out, quiet, time.Now())
	ticker := time.NewTicker(tickEvery)
	defer ticker.Stop()
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				ok := p.summary(time.Now())
				if err := <-readErr; err != nil {
					fmt.Fprintf(out, "testprogress: reading the test output: %v\n", err)
					return false
				}
				return ok
			}
			p.line(line, time.Now())
		case now := <-ticker.C:
			p.tick(now)
		}
	}
}
