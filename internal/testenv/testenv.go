// Package testenv decides what a test does when the machine lacks something
// it needs from outside the repository: the public test data, a service (a
// Slurm cluster, sshd, Chromium) or a program (sh, setsid, git).
//
// Outside CI such a test skips with a message naming what is missing, so
// that `go test ./...` passes anywhere. Under CI=true (as .ci/run sets it) it
// fails instead: CI promises to provide everything, and a test that skips
// there would report ok for code it never ran.
package testenv

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Required reports whether the environment promises every requirement:
// $CI holds a true value ("true", "1", ...), as CI services set it.
func Required() bool {
	b, _ := strconv.ParseBool(os.Getenv("CI"))
	return b
}

// Skip skips t with args as its message (spaced as t.Skip spaces them), or
// fails it with that message when Required.
func Skip(t testing.TB, args ...any) {
	t.Helper()
	if Required() {
		t.Fatal("CI=true, and this test's requirement is missing: " + strings.TrimSuffix(fmt.Sprintln(args...), "\n"))
	}
	t.Skip(args...)
}

// Skipf is Skip with a format.
func Skipf(t testing.TB, format string, args ...any) {
	t.Helper()
	Skip(t, fmt.Sprintf(format, args...))
}
