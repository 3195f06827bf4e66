//go:build !unix

package lstm

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
