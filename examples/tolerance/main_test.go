package main

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/crosscluster/crosscluster/divergence"
)

// TestVerdict: the program's verdict fails (and it exits 1) when any row
// under a tolerance does not pass, naming each; unbounded rows never fail
// it (issues 12 and 15: the CLI exited 0 when rows FAILed).
func TestVerdict(t *testing.T) {
	pass := divergence.Row{A: "a", B: "b", Key: "z", Max: 1e-9, Bounded: true, Tolerance: 1e-6, Pass: true}
	over := divergence.Row{A: "a", B: "c", Key: "z", Max: 1e-3, Bounded: true, Tolerance: 1e-6}
	missing := divergence.Row{A: "b", B: "c", Key: "w", Max: math.NaN(), Bounded: true, Tolerance: 1e-6, Warning: `c: key "w" missing`}
	free := divergence.Row{A: "a", B: "b", Key: "x", Max: 5}
	if err := verdict([]divergence.Row{pass, free}); err != nil {
		t.Errorf("all bounded rows pass: %v", err)
	}
	err := verdict([]divergence.Row{pass, over, missing, free})
	if !errors.Is(err, errFail) || !strings.Contains(err.Error(), "2 of 3 rows FAIL") ||
		!strings.Contains(err.Error(), "a vs c z (max 1.000000e-03 > tol 1.000000e-06)") || !strings.Contains(err.Error(), `key "w" missing`) {
		t.Errorf("verdict = %v", err)
	}
}
