// Package cputime reads the process's CPU time, which benchmarks report
// next to wall time: what a benchmark costs whatever else the machine is
// running.
package cputime
