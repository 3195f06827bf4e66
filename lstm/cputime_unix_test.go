//go:build unix

package lstm

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system) the process has used. The
// benchmarks report throughput per CPU second besides per wall second
// because the test machine is shared: wall time then includes waiting for
// a core, CPU time does not.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
