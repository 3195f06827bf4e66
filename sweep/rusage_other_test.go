//go:build !unix

package sweep

import "time"

func cpuTime() time.Duration { return 0 }

func peakRSSMiB() float64 { return 0 }
