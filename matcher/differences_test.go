package matcher

import (
	"errors"
	"strings"
	"testing"
)

// TestRainbowDifferenceCases: the minimal case of every row of
// docs/rainbow.md's "Where this package differs from rainbow", decided as
// the "here" column says. (What rainbow answers on each is measured by
// matcher/internal/rainbowdiff against its own code.)
func TestRainbowDifferenceCases(t *testing.T) {
	// One node with two cores (ids: cluster 0, rack 1, node 2, socket 3,
	// cores 4 and 5), io vertices attached to the node.
	graph := oneNodeGraph(t)
	size2 := strings.ReplaceAll(graph, "\"size\": 1,\n          \"type\": \"core\"", "\"size\": 2,\n          \"type\": \"core\"")
	if size2 == graph {
		t.Fatal("could not give the cores size 2")
	}
	cluster := func(t *testing.T, graph string, io ...Vertex) Cluster {
		t.Helper()
		c, err := ReadCluster(strings.NewReader(graph), "c")
		if err != nil {
			t.Fatal(err)
		}
		c.Subsystems = map[string]*Subsystem{
			"io":    {Name: "io", Vertices: io},
			"spack": {Name: "spack", Vertices: []Vertex{{ID: "s1", Fields: map[string]string{"version": "1.2.5"}, Parents: []string{"2"}}}},
		}
		return c
	}
	shm := Vertex{ID: "io1", Fields: map[string]string{"type": "shm"}, Parents: []string{"2"}}
	node := func(body string) string {
		return "version: 1\nresources:\n  job:\n    type: node\n    replicas: 1\n" + body
	}
	for _, tc := range []struct {
		name    string
		jobspec string
		graph   string
		want    Verdict
		reason  ReasonKind // 0 when matched
	}{
		{"counts multiply", node("    with:\n    - {type: core, count: 3}\n"), graph, Never, TooFewCores},
		{"a gpu is not counted", node("    with:\n    - {type: gpu, count: 1}\n"), graph, Matched, 0},
		{"replicas are nodes", "version: 1\nresources:\n  job:\n    type: node\n    replicas: 2\n    with:\n    - {type: core, count: 1}\n", graph, Never, TooFewNodes},
		{"every entry for one subsystem", node("    requires:\n    - {name: spack, field: version, max: \"0.5\"}\n    - {name: spack, field: version, min: \"1\"}\n"), graph, Never, OutOfRange},
		{"match empty", node("    requires:\n    - {name: io, field: type, match: \"\"}\n"), graph, Never, NotEqual},
		{"top-level requires", "version: 1\nrequires:\n- {name: gpu, field: model, match: a100}\nresources:\n  job: {type: node, replicas: 1}\n", graph, Never, MissingSubsystem},
		{"requires above the slot", "version: 1\nresources:\n  job:\n    type: node\n    count: 1\n    requires:\n    - {name: io, field: type, match: nvme}\n    with:\n    - type: slot\n      replicas: 1\n      with:\n      - {type: core, count: 1}\n", graph, Never, NotEqual},
		{"a root that is not vertex 0", node(""), strings.ReplaceAll(strings.ReplaceAll(graph, `"0"`, `"r"`), `"label": "r"`, `"label": "r"`), Matched, 0},
		{"max 1.2 is a version", node("    requires:\n    - {name: spack, field: version, max: \"1.2\"}\n"), graph, Never, OutOfRange},
		{"max 1.2.x does not parse", node("    requires:\n    - {name: spack, field: version, max: 1.2.x}\n"), graph, Never, BadVersion},
		{"min 1.10 is its text", node("    requires:\n    - {name: spack, field: version, min: 1.10}\n"), graph, Never, OutOfRange},
		{"a core of size 2 is one core", node("    with:\n    - {type: core, count: 3}\n"), size2, Never, TooFewCores},
		{"match with max reads the match", node("    requires:\n    - {name: io, field: type, match: shm, max: \"0.5\"}\n"), graph, Matched, 0},
		{"every group counts", "version: 1\nresources:\n  a: {type: node, replicas: 1}\n  b: {type: node, count: 1}\n", graph, Never, TooFewNodes},
		{"a slot of type slot with a count", "version: 1\nresources:\n  job:\n    type: node\n    count: 1\n    with:\n    - type: slot\n      count: 1\n      with:\n      - {type: core, count: 1}\n", graph, Matched, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, err := ReadJobspec(strings.NewReader(tc.jobspec), "case.yaml")
			if err != nil {
				t.Fatal(err)
			}
			c := cluster(t, tc.graph, shm)
			res := (Rules{}).Match(&j, &c)
			if res.Verdict != tc.want || tc.reason != 0 && (len(res.Reasons) == 0 || res.Reasons[0].Kind != tc.reason) {
				t.Errorf("verdict %v %v, want %v %v", res.Verdict, res.Reasons, tc.want, tc.reason)
			}
		})
	}
	t.Run("incomplete entry refused", func(t *testing.T) {
		_, err := ReadJobspec(strings.NewReader(node("    requires:\n    - {name: io, match: shm}\n")), "case.yaml")
		if !errors.Is(err, ErrSchema) {
			t.Errorf("ReadJobspec: %v, want ErrSchema", err)
		}
	})
	t.Run("orphan vertex refused", func(t *testing.T) {
		orphan := strings.Replace(graph, `"nodes": {`, `"nodes": {"77": {"label": "77", "metadata": {"type": "node"}},`, 1)
		if _, err := ReadCluster(strings.NewReader(orphan), "c"); !errors.Is(err, ErrSchema) {
			t.Errorf("ReadCluster: %v, want ErrSchema", err)
		}
	})
	t.Run("dangling edge refused", func(t *testing.T) {
		dangling := strings.Replace(graph, `"edges": [`, `"edges": [{"source": "98", "target": "0", "relation": "in"},`, 1)
		if _, err := ReadCluster(strings.NewReader(dangling), "c"); !errors.Is(err, ErrSchema) {
			t.Errorf("ReadCluster: %v, want ErrSchema", err)
		}
	})
	t.Run("any attached vertex", func(t *testing.T) {
		j, err := ReadJobspec(strings.NewReader(node("    requires:\n    - {name: io, field: type, match: shm}\n")), "case.yaml")
		if err != nil {
			t.Fatal(err)
		}
		nvme := Vertex{ID: "io0", Fields: map[string]string{"type": "nvme"}, Parents: []string{"2"}}
		c := cluster(t, graph, nvme, shm)
		if res := (Rules{}).Match(&j, &c); res.Verdict != Matched {
			t.Errorf("verdict %v %v, want match", res.Verdict, res.Reasons)
		}
	})
	t.Run("numeric metadata is its text", func(t *testing.T) {
		doc := `{"graph": {"nodes": {"io0": {"label": "io0", "metadata": {"type": "io"}}, "io1": {"label": "io1", "metadata": {"type": "shm", "version": 1}}}, "edges": [{"source": "io0", "target": "io1", "relation": "contains"}, {"source": "2", "target": "io1", "relation": "contains"}]}}`
		s, err := ReadSubsystem(strings.NewReader(doc), "io.json", "io")
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Vertices) != 1 || s.Vertices[0].Fields["version"] != "1" {
			t.Errorf("vertices %+v, want version \"1\"", s.Vertices)
		}
	})
	t.Run("capacity", func(t *testing.T) {
		j, _ := ReadJobspec(strings.NewReader(node("")), "case.yaml")
		c := cluster(t, graph, shm)
		c.State = map[string]float64{"nodes_free": 0}
		if res := (Rules{}).Match(&j, &c); res.Verdict != NotNow {
			t.Errorf("verdict %v, want not-now", res.Verdict)
		}
	})
}
