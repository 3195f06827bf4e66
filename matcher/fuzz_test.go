package matcher

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crosscluster/crosscluster/internal/pubdata"
)

// seedFile adds the first bytes of a real data file to a corpus when the
// shared data is present.
func seedFile(f *testing.F, rel string, n int) {
	dir, err := pubdata.Dir("rainbow")
	if err != nil {
		return
	}
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		return
	}
	f.Add(b[:min(n, len(b))])
	f.Add(b[:min(n/3, len(b))]) // truncated mid-document
}

// checkTyped fails unless err is nil or a *ParseError wrapping a sentinel.
func checkTyped(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *ParseError", err, err)
	}
	if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrSchema) && !errors.Is(err, ErrTooComplex) && !errors.Is(err, ErrTooLarge) {
		t.Fatalf("error %v wraps none of ErrSyntax, ErrSchema, ErrTooComplex, ErrTooLarge", err)
	}
}

func FuzzReadBuildJobs(f *testing.F) {
	f.Add([]byte("- name: 1\n  package: p\n  attributes: {duration: 1, memory_global_best_runtime: 1, memory_of_top_ten_percent_runtime: 1}\n  resources: {arch: {arch: a}, compiler: {compiler_name: gcc, compiler_version: 1}, memory: {mem_max: 1, mem_mean: 1, mem_min: 1}}\n"))
	seedFile(f, "spack-build/jobspecs/jobspecs-1000.yaml", 3000)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := ReadBuildJobs(bytes.NewReader(b), "fuzz.yaml")
		checkTyped(t, err)
	})
}

// jobspecSeeds are jobspecs of both forms, valid and not, that the fuzzer
// starts from and TestWriteJobspecLoadsInRainbow writes back.
var jobspecSeeds = []string{
	"resources:\n- count: 2\n  type: node\n  with:\n  - count: 4\n    type: core\ntask:\n  resources:\n    m4:\n      range:\n      - field: version\n        min: 1\n",
	"resources:\n  g:\n    replicas: 2\n    type: node\n    requires:\n    - name: io\n      field: type\n      match: shm\n",
	"resources:\n- type: node\n  count: 1\n  with:\n  - type: core\n    count: 2\n    requires:\n    - {name: io, field: type, match: shm}\n",
	"resources:\n- count: 1\n  requires:\n  - {name: io, field: type, min: '1'}\n",
	"resources:\n- &a\n  count: 2\n  with: [*a]\n",
	"resources:\n- &a\n  count: 1\n  type: node\n  with: [*a]\n",
}

func FuzzReadJobspec(f *testing.F) {
	for _, s := range jobspecSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(aliasBomb()))
	f.Fuzz(func(t *testing.T, b []byte) {
		j, err := ReadJobspec(bytes.NewReader(b), "fuzz.yaml")
		checkTyped(t, err)
		if err == nil {
			// Whatever is read, WriteJobspec writes in a form rainbow
			// loads, and it reads back.
			checkLoadsInRainbow(t, "fuzz", j)
		}
	})
}

func FuzzReadCluster(f *testing.F) {
	f.Add([]byte(`{"name": "c", "graph": {"nodes": {"0": {"metadata": {"type": "cluster"}}, "1": {"metadata": {"type": "node"}}}, "edges": [{"source": "0", "target": "1", "relation": "contains"}]}}`))
	seedFile(f, "spack-build/jgf-sample/nodes.json", 4000)
	j, err := ReadJobspec(strings.NewReader("version: 1\nresources:\n  job:\n    type: node\n    replicas: 2\n    with:\n    - {type: core, count: 1}\n"), "j.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ReadCluster(bytes.NewReader(b), "fuzz.json")
		checkTyped(t, err)
		if err == nil && len(c.VertexTypes) < c.Nodes+c.Cores {
			t.Fatalf("%d vertex types for %d nodes and %d cores", len(c.VertexTypes), c.Nodes, c.Cores)
		}
		// What comes with an error, the default rules never match; the
		// Rainbow rules decide on anything without a panic.
		if got := (Rules{}).Match(&j, &c); err != nil && got.Verdict != Never {
			t.Fatalf("default rules: %v on a cluster read with %v", got.Verdict, err)
		}
		(Rules{Rainbow: true}).Match(&j, &c)
	})
}

func FuzzReadSubsystem(f *testing.F) {
	seedFile(f, "spack-build/jgf-sample/compiler-subsystem.json", 4000)
	seedFile(f, "reliabuild/jgf-sample/amrex-subsystem.json", 4000)
	f.Add([]byte(`{"graph": {"nodes": {"a1": {"metadata": {"version": "1.0"}}}, "edges": [{"source": "2", "target": "a1", "relation": "contains"}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := ReadSubsystem(bytes.NewReader(b), "fuzz.json", "x")
		checkTyped(t, err)
	})
}
