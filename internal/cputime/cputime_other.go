//go:build !unix

package cputime

import (
	"os"
	"time"
)

func self() (time.Duration, bool) { return 0, false }

func system() (time.Duration, bool) { return 0, false }

func peakRSS() (int64, bool) { return 0, false }

func processRSS(*os.ProcessState) (int64, bool) { return 0, false }
