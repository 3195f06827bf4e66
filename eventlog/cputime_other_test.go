//go:build !unix

package eventlog_test

import "time"

var start = time.Now()

// cpuTime falls back to wall time where getrusage does not exist.
func cpuTime() time.Duration { return time.Since(start) }
