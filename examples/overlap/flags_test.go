package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlagsRefused: every bad flag value and stray argument is refused
// with exit status 2 and one line naming it, before any work: the output
// directory is not even created.
func TestFlagsRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"crossfit one fold", []string{"-crossfit", "1"}, "-crossfit 1"},
		{"crossfit negative", []string{"-crossfit", "-3"}, "-crossfit -3"},
		{"band above one", []string{"-band", "0.2,1.5"}, "invalid band"},
		{"band below zero", []string{"-band", "-0.1,0.8"}, "invalid band"},
		{"band reversed", []string{"-band", "0.8,0.2"}, "invalid band"},
		{"band NaN", []string{"-band", "NaN,0.8"}, "invalid band"},
		{"band one number", []string{"-band", "0.5"}, "want lo,hi"},
		{"no jobs", []string{"-n", "0"}, "-n 0"},
		{"unknown regime", []string{"-regime", "quantum"}, "quantum"},
		{"bad units", []string{"-units", "conte"}, "conte"},
		{"source without target", []string{"-source", "a.csv"}, "both -source and -target"},
		{"halves without clusters", []string{"-halves"}, "-halves"},
		{"empty feature", []string{"-features", "ncores,,nhosts"}, "empty feature"},
		{"stray argument", []string{"-n", "100", "extra"}, `unexpected argument "extra"`},
		{"unknown flag", []string{"-nope"}, "-nope"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			var stdout, stderr bytes.Buffer
			code := mainCode(append([]string{"-out", out}, c.args...), &stdout, &stderr)
			if code != 2 {
				t.Errorf("exit status %d, want 2; stderr:\n%s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("stderr does not name %q:\n%s", c.want, stderr.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout not empty:\n%s", stdout.String())
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("refused run left %s behind (%v)", out, err)
			}
		})
	}
}

// TestESSWarning: a Kish ESS under 1% of the source's jobs is warned about,
// as in a Stampede month where one job of 14,979 carries the weight.
func TestESSWarning(t *testing.T) {
	if w := essWarning(1, 14979); !strings.Contains(w, "1.0 of 14979 jobs") {
		t.Errorf("ESS 1 of 14979: warning %q", w)
	}
	for _, c := range []struct {
		ess float64
		n   int
	}{{500, 14979}, {150, 14979}, {0, 0}} {
		if w := essWarning(c.ess, c.n); w != "" {
			t.Errorf("ESS %v of %d: unexpected warning %q", c.ess, c.n, w)
		}
	}
}
