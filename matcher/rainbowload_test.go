package matcher

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crosscluster/crosscluster/matcher/internal/rainbowspec"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// writtenForm is what ReadJobspec gives back for j after WriteJobspec:
// at least one node, cores spread evenly, and only the requirements the
// nextgen form has a place for.
func writtenForm(j Job) Job {
	want := Job{Name: j.Name, Nodes: max(j.Nodes, 1)}
	if j.Cores > 0 {
		want.Cores = want.Nodes * max(1, j.Cores/want.Nodes)
	}
	for _, q := range j.Requires {
		if q.Under == "" || q.Under == "node" || q.Under == "core" && j.Cores > 0 {
			want.Requires = append(want.Requires, q)
		}
	}
	return want
}

// checkLoadsInRainbow writes j, checks the text against jobspec-go's
// nextgen v1 schema and types, and reads it back.
func checkLoadsInRainbow(t *testing.T, name string, j Job) {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteJobspec(&buf, &j); err != nil {
		t.Fatalf("%s: WriteJobspec: %v", name, err)
	}
	if err := rainbowspec.Check(buf.Bytes()); err != nil {
		t.Fatalf("%s: the written jobspec does not load in rainbow: %v\n%s", name, err, buf.String())
	}
	got, err := ReadJobspec(bytes.NewReader(buf.Bytes()), name)
	if err != nil {
		t.Fatalf("%s: ReadJobspec of the written form: %v\n%s", name, err, buf.String())
	}
	sortReqs := cmpopts.SortSlices(func(a, b Requirement) bool { return a.String() < b.String() })
	if diff := cmp.Diff(writtenForm(j), got, sortReqs, cmpopts.EquateEmpty(), cmpopts.IgnoreUnexported(Job{}, Cluster{}, Subsystem{})); diff != "" {
		t.Errorf("%s: round trip (-want +got):\n%s\n%s", name, diff, buf.String())
	}
}

// TestWriteJobspecLoadsInRainbow: every jobspec of the tests (rainbow's
// own examples, the fuzz seeds, and jobs built in Go with values YAML would
// otherwise read as numbers, booleans or null) is written in the form
// rainbow loads and reads back to the same job.
func TestWriteJobspecLoadsInRainbow(t *testing.T) {
	docs := map[string]string{}
	files, err := filepath.Glob("testdata/rainbow-examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("rainbow's example jobspecs: %v %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[f] = string(b)
	}
	for i, s := range jobspecSeeds {
		docs["seed"+string(rune('a'+i))] = s
	}
	read := 0
	for name, doc := range docs {
		j, err := ReadJobspec(strings.NewReader(doc), name)
		if err != nil {
			continue // the seeds include refused documents
		}
		read++
		checkLoadsInRainbow(t, name, j)
	}
	if read < len(files)+2 {
		t.Errorf("only %d documents read", read)
	}
	for _, v := range []string{"1.10", "010", "0x1F", "1e3", "yes", "on", "No", "null", "~", " x ", "a: b", "- c", "#d", "2024-03-31", "0.5.1", "'q'", "\"q\"", "ünï"} {
		checkLoadsInRainbow(t, "value "+v, Job{Name: v, Nodes: 3, Cores: 7, Requires: []Requirement{
			{Subsystem: "io", Field: "type", Op: Equal, Value: v},
			{Subsystem: "spack", Field: "version", Op: InRange, Min: v, Max: v + "9", Under: "node"},
			{Subsystem: "spack", Field: "version", Op: InRange, Max: v, Under: "core"},
		}})
	}
	checkLoadsInRainbow(t, "empty", Job{})
	checkLoadsInRainbow(t, "match empty", Job{Requires: []Requirement{{Subsystem: "io", Field: "type", Op: Equal, Value: ""}}})
	checkLoadsInRainbow(t, "skipped nestings", Job{Nodes: 2, Requires: []Requirement{
		{Subsystem: "io", Field: "type", Op: Equal, Value: "shm", Under: "socket"},
		{Subsystem: "io", Field: "type", Op: Equal, Value: "shm", Under: "core"},
	}})
}

// TestRainbowSpecCheck: the check refuses what rainbow cannot load,
// among them the experiment-era list of resources ("cannot unmarshal array
// into ... v1.Resources") and a requirement value that is not a string.
func TestRainbowSpecCheck(t *testing.T) {
	for _, doc := range []string{
		"version: 1\nresources:\n- type: node\n  count: 1\n",
		"version: 2\n",
		"resources: {}\n",
		"version: 1\nresources:\n  job:\n    count: 1\n",
		"version: 1\nresources:\n  job:\n    type: node\n    count: 0\n",
		"version: 1\nresources:\n  job:\n    type: node\n    requires:\n    - {name: spack, field: version, min: 1.10}\n",
		"version: 1\nresources:\n  job:\n    type: node\n    with: []\n",
		"version: 1\nresources:\n  job:\n    type: node\n    reqiures: []\n",
		"version: 1\ntasks:\n- command: []\n",
	} {
		if err := rainbowspec.Check([]byte(doc)); err == nil {
			t.Errorf("accepted:\n%s", doc)
		}
	}
	if err := rainbowspec.Check([]byte("version: 1\nresources:\n  job:\n    type: node\n    replicas: 2\n    requires:\n    - {name: io, field: type, match: shm}\n    with:\n    - {type: core, count: 2}\ntasks:\n- command: [ior]\n  resources: job\n")); err != nil {
		t.Errorf("refused a valid jobspec: %v", err)
	}
}
