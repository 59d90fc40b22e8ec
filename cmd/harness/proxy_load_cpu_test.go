package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
)

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's CPU
// times (100 on every Linux platform Go supports).
const clockTicks = 100

// procCPU reads a process's CPU seconds from /proc/PID/stat: its own user
// and system time, plus with children its waited-for children's (a
// postmaster's exited backends). It returns 0 when the process is gone.
func procCPU(pid int, children bool) float64 {
	f := statFields(pid) // f[0] is field 3 (state)
	if len(f) < 15 {
		return 0
	}
	sum := 0.0
	last := 14 // utime, stime are fields 14, 15; cutime, cstime 16, 17
	if children {
		last = 16
	}
	for i := 11; i <= last; i++ {
		n, _ := strconv.ParseFloat(f[i], 64)
		sum += n
	}
	return sum / clockTicks
}

// statFields returns the fields of /proc/PID/stat after the command name
// (which may hold spaces), from field 3 on; nil when the process is gone.
func statFields(pid int) []string {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(raw)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	return strings.Fields(s)
}

// postgresCPU is the CPU seconds of the test cluster so far: the
// postmaster with its exited children, and its live children.
func postgresCPU() float64 {
	raw, err := os.ReadFile(filepath.Join(pgServer.Socket(), "data", "postmaster.pid"))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(raw), "\n", 2)[0]))
	if err != nil {
		return 0
	}
	total := procCPU(pid, true)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil || parentPID(child) != pid {
			continue
		}
		total += procCPU(child, false)
	}
	return total
}

// parentPID reads a process's parent from /proc/PID/stat (-1 when gone).
func parentPID(pid int) int {
	f := statFields(pid) // f[1] is field 4 (ppid)
	if len(f) < 2 {
		return -1
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// profiledMain runs the CLI as main does, with a CPU profile written to
// dir/cpu-PID.prof (HARNESS_LOAD_CPUPROFILE: where the load test's
// replicas spend their time).
func profiledMain(dir string) {
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%d.prof", os.Getpid())))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runMain(ctx, os.Args[1:], &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv})
	stop()
	pprof.StopCPUProfile()
	f.Close()
	os.Exit(code)
}
