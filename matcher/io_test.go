package matcher

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestLoaderErrors(t *testing.T) {
	tests := []struct {
		name     string
		read     func([]byte) error
		in       string
		sentinel error
		path     string
		line     int
	}{
		{"build memory not a number", readBJ, "- name: 1\n  package: p\n  attributes: {duration: 1, memory_global_best_runtime: 1, memory_of_top_ten_percent_runtime: 1}\n  resources:\n    arch: {arch: x}\n    compiler: {compiler_name: gcc, compiler_version: 1}\n    memory: {mem_max: lots, mem_mean: 1, mem_min: 1}\n", ErrSchema, "[0].resources.memory.mem_max", 7},
		{"build missing arch", readBJ, "- name: 1\n  package: p\n  attributes: {duration: 1, memory_global_best_runtime: 1, memory_of_top_ten_percent_runtime: 1}\n  resources: {}\n", ErrSchema, "[0].resources", 1},
		{"jgf nodes not object", readCl, `{"graph": {"nodes": []}}`, ErrSchema, "graph.nodes", 0},
		{"jgf edge target", readSub, `{"graph": {"nodes": {"a1": {"metadata": {"type": "x"}}}, "edges": [{"source": "1", "target": {}, "relation": "contains"}]}}`, ErrSchema, "graph.edges[0].target", 0},
		{"jgf no cluster", readCl, `{"graph": {"nodes": {"0": {"metadata": {"type": "rack"}}}}}`, ErrSchema, "graph.nodes", 0},
		{"jobspec range without bounds", readJS, "task:\n  resources:\n    spack:\n      range:\n      - field: version\n", ErrSchema, "task.resources.spack.range[0]", 5},
		{"jobspec requires without field", readJS, "resources:\n  g:\n    type: node\n    requires:\n    - name: io\n      match: shm\n", ErrSchema, "resources.g.requires[0]", 5},
		{"jobspec cyclic alias", readJS, "resources:\n- &a\n  count: 1\n  type: node\n  with: [*a]\n", ErrSchema, "resources[0]" + strings.Repeat(".with[0]", maxNesting+1), 5},
		{"jobspec negative count", readJS, "resources:\n- count: -2\n  type: node\n", ErrSchema, "resources[0].count", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.read([]byte(tt.in))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if !errors.Is(err, tt.sentinel) {
				t.Errorf("error %v does not wrap %v", err, tt.sentinel)
			}
			if pe.File != "in.txt" || !strings.Contains(err.Error(), "in.txt") {
				t.Errorf("error %q does not name the file", err)
			}
			if pe.Path != tt.path {
				t.Errorf("path = %q, want %q (%v)", pe.Path, tt.path, err)
			}
			if pe.Line != tt.line {
				t.Errorf("line = %d, want %d (%v)", pe.Line, tt.line, err)
			}
		})
	}
}

func readBJ(b []byte) error { _, err := ReadBuildJobs(bytes.NewReader(b), "in.txt"); return err }
func readCl(b []byte) error { _, err := ReadCluster(bytes.NewReader(b), "in.txt"); return err }
func readSub(b []byte) error {
	_, err := ReadSubsystem(bytes.NewReader(b), "in.txt", "x")
	return err
}
func readJS(b []byte) error { _, err := ReadJobspec(bytes.NewReader(b), "in.txt"); return err }

func TestReadJobspec(t *testing.T) {
	// The published driver's template with one range and one match added.
	era := `version: 1
resources:
- count: 2
  type: node
  with:
  - count: 4
    type: core
task:
  command: ["zlib"]
  count:
    per_slot: 1
  resources:
    m4:
      range:
      - field: version
        min: 1.4.19
        max: 1.4.20
    arch:
      match:
      - field: value
        value: linux-amzn2-aarch64
attributes:
  parameter:
    seconds_per_gb: 2
`
	// rainbow's docs/examples/match-algorithms/range/jobspec-valid-range.yaml.
	current := `version: 1
resources:
  spack:
    replicas: 2
    type: node
    requires:
    - name: spack
      field: version
      min: "0.5.1"
      max: "0.5.5"
    - name: io
      field: type
      match: shm
    with:
    - count: 2
      type: core
tasks:
  - command: [ior]
    resources: spack
`
	tests := []struct {
		name string
		in   string
		want Job
	}{
		{"experiment era", era, Job{Nodes: 2, Cores: 8, Requires: []Requirement{
			{Subsystem: "m4", Field: "version", Op: InRange, Min: "1.4.19", Max: "1.4.20"},
			{Subsystem: "arch", Field: "value", Op: Equal, Value: "linux-amzn2-aarch64"}}}},
		{"current", current, Job{Nodes: 2, Cores: 4, Requires: []Requirement{
			{Subsystem: "spack", Field: "version", Op: InRange, Min: "0.5.1", Max: "0.5.5", Under: "node"},
			{Subsystem: "io", Field: "type", Op: Equal, Value: "shm", Under: "node"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadJobspec(strings.NewReader(tt.in), "x.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(Job{}, Cluster{}, Subsystem{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteJobspecRoundTrip(t *testing.T) {
	j := Job{Name: "j", Nodes: 2, Cores: 8, Requires: []Requirement{
		{Subsystem: "arch", Field: "value", Op: Equal, Value: "x86_64"},
		{Subsystem: "m4", Field: "version", Op: InRange, Min: "1.4.19"},
		{Subsystem: "m4", Field: "version", Op: InRange, Max: "2"},
		{Subsystem: "io", Field: "type", Op: Equal, Value: "shm", Under: "node"},
		{Subsystem: "arch", Field: "value", Op: Equal, Value: "x86_64", Under: "core"},
		{Subsystem: "spack", Field: "version", Op: InRange, Min: "0.5", Under: "node"},
		// No place in the written form: skipped.
		{Subsystem: "io", Field: "type", Op: Equal, Value: "shm", Under: "socket"},
	}}
	var buf bytes.Buffer
	if err := WriteJobspec(&buf, &j); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJobspec(&buf, "roundtrip")
	if err != nil {
		t.Fatal(err)
	}
	want := j
	// Nested requirements come back first, in tree order (node, then
	// core); the task's grouped by subsystem, in name order.
	want.Requires = append([]Requirement{j.Requires[3], j.Requires[5], j.Requires[4]}, j.Requires[:3]...)
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Job{}, Cluster{}, Subsystem{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestJGFRoundTrip(t *testing.T) {
	c := Cluster{Name: "cluster-red", Nodes: 3, Cores: 12}
	var buf bytes.Buffer
	if err := WriteCluster(&buf, &c); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCluster(&buf, "nodes.json")
	if err != nil {
		t.Fatal(err)
	}
	// WriteCluster's layout: cluster, rack, then per node its socket and
	// cores, numbered in that order.
	types := map[string]string{"0": "cluster", "1": "rack"}
	for n := range 3 {
		at := 2 + 6*n
		types[strconv.Itoa(at)], types[strconv.Itoa(at+1)] = "node", "socket"
		for k := range 4 {
			types[strconv.Itoa(at+2+k)] = "core"
		}
	}
	if diff := cmp.Diff(Cluster{Name: "cluster-red", Nodes: 3, Cores: 12, Subsystems: map[string]*Subsystem{}, VertexTypes: types}, got, cmpopts.IgnoreUnexported(Job{}, Cluster{}, Subsystem{})); diff != "" {
		t.Errorf("cluster (-want +got):\n%s", diff)
	}
	// The published layout: 4 nodes of 2 cores put the nodes at ids 2, 6,
	// 10 and 14, where subsystem vertices attach.
	buf.Reset()
	if err := WriteCluster(&buf, &Cluster{Name: "c", Nodes: 4, Cores: 8}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Graph struct {
			Nodes map[string]struct{ Metadata map[string]any }
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var nodeIDs []string
	for id, n := range doc.Graph.Nodes {
		if n.Metadata["type"] == "node" {
			nodeIDs = append(nodeIDs, id)
		}
	}
	slices.SortFunc(nodeIDs, compareIDs)
	if diff := cmp.Diff([]string{"2", "6", "10", "14"}, nodeIDs); diff != "" {
		t.Errorf("node ids (-want +got):\n%s", diff)
	}
	s := Subsystem{Name: "compiler", Vertices: []Vertex{
		{ID: "compiler1", Type: "compiler", Fields: map[string]string{"value": "gcc"}, Parents: []string{"2", "6"}},
		{ID: "compiler2", Type: "compiler-version", Fields: map[string]string{"value": "12.3.0"}, Parents: []string{"2", "6"}},
	}}
	buf.Reset()
	if err := WriteSubsystem(&buf, &s); err != nil {
		t.Fatal(err)
	}
	gs, err := ReadSubsystem(&buf, "compiler-subsystem.json", "compiler")
	if err != nil {
		t.Fatal(err)
	}
	for i := range gs.Vertices {
		v := &gs.Vertices[i]
		if v.Fields["value"] != s.Vertices[i].Fields["value"] || v.Type != s.Vertices[i].Type || !cmp.Equal(v.Parents, s.Vertices[i].Parents) {
			t.Errorf("vertex %d: got %+v, want %+v", i, *v, s.Vertices[i])
		}
	}
}
