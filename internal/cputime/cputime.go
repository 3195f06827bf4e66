// Package cputime reads the CPU time and peak resident memory of the current
// process, for benchmarks and examples that report speed per CPU-second (the
// figure Python's time.process_time gives the peers).
//
// Where the operating system has no getrusage(2) (Windows, Plan 9, wasm) the
// functions report ok == false and the callers print "n/a" instead of a number.
package cputime

import (
	"os"
	"time"
)

// Self returns the user plus system CPU time consumed so far by this process,
// all threads included, as getrusage(RUSAGE_SELF) reports it.
func Self() (d time.Duration, ok bool) { return self() }

// System returns the part of Self spent in the kernel on the process's
// behalf (ru_stime): page faults of fresh memory, system calls.
func System() (d time.Duration, ok bool) { return system() }

// PeakRSS returns the largest resident set size of this process so far, in
// bytes (ru_maxrss; Linux reports it in KiB, macOS in bytes).
func PeakRSS() (bytes int64, ok bool) { return peakRSS() }

// Process returns the CPU time (user plus system) and peak resident set
// size of a child process that has exited, as wait4(2) reported them, for
// benchmarks that measure a program run as a subprocess.
func Process(ps *os.ProcessState) (cpu time.Duration, peakRSS int64, ok bool) {
	if ps == nil {
		return 0, 0, false
	}
	rss, ok := processRSS(ps)
	return ps.UserTime() + ps.SystemTime(), rss, ok
}
