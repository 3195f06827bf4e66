// Package pubdata finds the real public test data (HTCondor event logs,
// Stampede accounting months, the rainbow experiments) that tests and
// examples read but the repository never holds.
//
// The data lives in a directory laid out as shared/testdata: one folder per
// source (fresco, htcondor, rainbow), each with its SOURCES.md. It is found,
// in order, at $CROSSCLUSTER_TESTDATA, or at ../shared/testdata beside the
// module's checkout. scripts/fetch-testdata.sh downloads it from the original
// sources and verifies every file's SHA-256. Every test and example that
// reads the data finds it here, so $CROSSCLUSTER_TESTDATA is honoured
// everywhere.
package pubdata

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/crosscluster/crosscluster/internal/testenv"
)

// Env names the environment variable that overrides the data's location.
const Env = "CROSSCLUSTER_TESTDATA"

// ErrAbsent reports that the data directory or one of its sources is not
// on this machine.
var ErrAbsent = errors.New("public test data not found")

// Root returns the data directory: $CROSSCLUSTER_TESTDATA when set, else
// shared/testdata in the parent of the directory holding go.mod (searched
// upwards from the working directory).
func Root() (string, error) {
	if d := os.Getenv(Env); d != "" {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return "", fmt.Errorf("%w: $%s=%s is not a directory", ErrAbsent, Env, d)
		}
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			d := filepath.Join(filepath.Dir(dir), "shared", "testdata")
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				return d, nil
			}
			return "", fmt.Errorf("%w: neither $%s nor %s (run scripts/fetch-testdata.sh)", ErrAbsent, Env, d)
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("%w: no go.mod above %s and $%s unset", ErrAbsent, wd, Env)
		}
	}
}

// Dir returns the directory of one source (for example "htcondor").
func Dir(source string) (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	d := filepath.Join(root, source)
	if st, err := os.Stat(d); err != nil || !st.IsDir() {
		return "", fmt.Errorf("%w: %s (run scripts/fetch-testdata.sh)", ErrAbsent, d)
	}
	return d, nil
}

// Need returns the directory of source, or skips t with a message that says
// where the data comes from (under CI=true it fails t instead: see
// internal/testenv).
func Need(t testing.TB, source string) string {
	t.Helper()
	d, err := Dir(source)
	if err != nil {
		testenv.Skipf(t, "%v; see README.md, 'Test data'", err)
	}
	return d
}
