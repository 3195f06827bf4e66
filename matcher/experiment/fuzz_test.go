package experiment

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/crosscluster/crosscluster/matcher"
)

// seedFile adds the first bytes of a real data file to a corpus when the
// shared data is present.
func seedFile(f *testing.F, rel string, n int) {
	b, err := os.ReadFile(filepath.Join(dataDir, rel))
	if err != nil {
		return
	}
	f.Add(b[:min(n, len(b))])
	f.Add(b[:min(n/3, len(b))]) // truncated mid-document
}

// checkTyped fails unless err is nil or a *matcher.ParseError wrapping a
// sentinel.
func checkTyped(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var pe *matcher.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *matcher.ParseError", err, err)
	}
	if !errors.Is(err, matcher.ErrSyntax) && !errors.Is(err, matcher.ErrSchema) && !errors.Is(err, matcher.ErrTooComplex) && !errors.Is(err, matcher.ErrTooLarge) {
		t.Fatalf("error %v wraps none of ErrSyntax, ErrSchema, ErrTooComplex, ErrTooLarge", err)
	}
}

func FuzzReadVersionJobs(f *testing.F) {
	f.Add([]byte("- name: a\n  package: b\n  resources:\n    m4: &x\n      min: 1\n      max: 2\n    xz: *x\n"))
	f.Add([]byte("- &a [*a]\n"))
	seedFile(f, "reliabuild/jobspecs/jobspecs-10.yaml", 3000)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := readVersionJobs(bytes.NewReader(b), "fuzz.yaml")
		checkTyped(t, err)
	})
}

func FuzzReadClusterFeatures(f *testing.F) {
	f.Add([]byte(`{"red": {"m4": "1.4.19"}}`))
	f.Add([]byte(`{"red": {"memory": 1, "cost_per_node_hour": 2, "arch": "a", "compiler": "gcc", "compiler_version": "1"}}`))
	seedFile(f, "reliabuild/cluster-features.json", 3000)
	seedFile(f, "spack-build/cluster-features.json", 3000)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := readVersionClusters(bytes.NewReader(b), "fuzz.json")
		checkTyped(t, err)
		_, err = readBuildClusters(bytes.NewReader(b), "fuzz.json")
		checkTyped(t, err)
	})
}
