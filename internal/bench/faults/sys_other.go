//go:build !linux

package main

import (
	"errors"
	"time"
)

type use struct {
	sys    time.Duration
	minflt int64
}

func usage() (use, bool) { return use{}, false }

func hugeMap(int) ([]byte, error) { return nil, errors.New("-huge needs Linux") }
