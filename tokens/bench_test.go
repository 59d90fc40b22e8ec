package tokens

import (
	"os"
	"strings"
	"testing"
)

func benchText(b *testing.B) string {
	b.Helper()
	src, err := os.ReadFile("testdata/prose.txt")
	if err != nil {
		b.Fatal(err)
	}
	return string(src)
}

// BenchmarkO200kCount measures counting throughput (MB/s) on mixed prose
// and code.
func BenchmarkO200kCount(b *testing.B) {
	c := mustO200k(b)
	text := benchText(b)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		c.Count(text)
	}
}

// BenchmarkO200kCountParallel measures throughput with one shared counter
// used from every core.
func BenchmarkO200kCountParallel(b *testing.B) {
	c := mustO200k(b)
	text := benchText(b)
	b.SetBytes(int64(len(text)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.Count(text)
		}
	})
}

// BenchmarkO200kCountJSON measures a large JSON tool result.
func BenchmarkO200kCountJSON(b *testing.B) {
	c := mustO200k(b)
	text := strings.Repeat(`{"name":"file_042.go","size":18234,"mode":"0644","dir":false},`, 2000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		c.Count(text)
	}
}

// BenchmarkNewBPE measures building a counter (the split regexp; the
// vocabulary map is built once per process).
func BenchmarkNewBPE(b *testing.B) {
	mustO200k(b)
	for b.Loop() {
		if _, err := newBPE("o200k_base"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkO200kCountBlankLines measures the splitter's worst case found:
// indented blank lines (whitespace runs full of line breaks), counted in
// chunks.
func BenchmarkO200kCountBlankLines(b *testing.B) {
	c := mustO200k(b)
	text := strings.Repeat(" \t \n", 16<<10)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		c.Count(text)
	}
}
