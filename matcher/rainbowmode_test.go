package matcher

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
)

// TestRainbowModeCases: the minimal case of each construct on which
// rainbow's match algorithm decides otherwise than the default rules, with
// the verdict rainbow's code gives (read from it at 075ee23, and measured
// on cases of the same kinds by matcher/internal/rainbowdiff) and the one
// the default rules give, so that each case shows the mode changes the
// answer.
func TestRainbowModeCases(t *testing.T) {
	// One node with two cores (ids: cluster 0, rack 1, node 2, socket 3,
	// cores 4 and 5), io and spack vertices attached to the node.
	graph := oneNodeGraph(t)
	size2 := strings.ReplaceAll(graph, "\"size\": 1,\n          \"type\": \"core\"", "\"size\": 2,\n          \"type\": \"core\"")
	if size2 == graph {
		t.Fatal("could not give the cores size 2")
	}
	root := strings.ReplaceAll(graph, `"0"`, `"r"`)
	node := func(body string) string {
		return "version: 1\nresources:\n  job:\n    type: node\n    replicas: 1\n" + body
	}
	for _, tc := range []struct {
		name              string
		jobspec, graph    string
		rainbow, default_ Verdict
	}{
		{"counts below the slot are totals", node("    with:\n    - {type: core, count: 3}\n"), graph, Never, Never},
		{"a vertex counts its size", node("    with:\n    - {type: core, count: 3}\n"), size2, Matched, Never},
		{"replicas need more vertices, not more nodes", "version: 1\nresources:\n  job:\n    type: node\n    replicas: 2\n    with:\n    - {type: core, count: 1}\n", graph, Matched, Never},
		{"a type the cluster lacks", node("    with:\n    - {type: gpu, count: 1}\n"), graph, Never, Matched},
		{"the last entry for one subsystem", node("    requires:\n    - {name: spack, field: version, max: \"0.5\"}\n    - {name: spack, field: version, min: \"1\"}\n"), graph, Matched, Never},
		{"match empty is no need", node("    requires:\n    - {name: io, field: type, match: \"\"}\n"), graph, Matched, Never},
		{"match and range in one entry", node("    requires:\n    - {name: io, field: type, match: shm, max: \"0.5\"}\n"), graph, Never, Matched},
		{"top-level requires are not read", "version: 1\nrequires:\n- {name: gpu, field: model, match: a100}\nresources:\n  job: {type: node, replicas: 1}\n", graph, Matched, Never},
		{"requires above the slot never refuse", "version: 1\nresources:\n  job:\n    type: node\n    count: 1\n    requires:\n    - {name: io, field: type, match: nvme}\n    with:\n    - type: slot\n      replicas: 1\n      with:\n      - {type: core, count: 1}\n", graph, Matched, Never},
		{"a group without replicas is one slot, its requires included", "version: 1\nresources:\n  job:\n    type: rack\n    count: 1\n    requires:\n    - {name: io, field: type, match: shm}\n    with:\n    - {type: node, replicas: 1}\n", graph, Never, Never},
		{"a group without a slot next to one with", "version: 1\nresources:\n  a:\n    type: node\n    replicas: 1\n  b:\n    type: node\n    count: 1\n    with:\n    - {type: gpu, count: 1}\n", graph, Matched, Never},
		{"only groups with replicas are slots", "version: 1\nresources:\n  a: {type: node, replicas: 1}\n  b: {type: node, count: 1}\n", graph, Matched, Never},
		{"a slot of type slot with a count", "version: 1\nresources:\n  job:\n    type: node\n    count: 1\n    with:\n    - type: slot\n      count: 1\n      with:\n      - {type: core, count: 1}\n", graph, Never, Matched},
		{"the search starts at vertex 0", node(""), root, Never, Matched},
		{"max 1.2 is a constraint", node("    requires:\n    - {name: spack, field: version, max: \"1.2\"}\n"), graph, Matched, Never},
		{"max 1.2.x is a constraint", node("    requires:\n    - {name: spack, field: version, max: 1.2.x}\n"), graph, Matched, Never},
		{"min 1.10 is the number 1.1", node("    requires:\n    - {name: spack, field: version, min: 1.10}\n"), graph, Matched, Never},
		{"a pre-release is outside a range of releases", node("    requires:\n    - {name: spack, field: version, min: \"1.0.0\", max: \"2.0.0\"}\n    - {name: io, field: type, match: shm}\n"), graph, Matched, Matched},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, err := ReadJobspec(strings.NewReader(tc.jobspec), "case.yaml")
			if err != nil {
				t.Fatal(err)
			}
			c, err := ReadCluster(strings.NewReader(tc.graph), "c")
			if err != nil {
				t.Fatal(err)
			}
			c.Subsystems = map[string]*Subsystem{
				"io":    {Name: "io", Vertices: []Vertex{{ID: "io1", Fields: map[string]string{"type": "shm"}, Parents: []string{"2"}}}},
				"spack": {Name: "spack", Vertices: []Vertex{{ID: "s1", Fields: map[string]string{"version": "1.2.5"}, Parents: []string{"2"}}}},
			}
			if got := (Rules{Rainbow: true}).Match(&j, &c); got.Verdict != tc.rainbow || len(got.Reasons) != 0 {
				t.Errorf("Rainbow mode: %v %v, want %v", got.Verdict, got.Reasons, tc.rainbow)
			}
			if got := (Rules{}).Match(&j, &c); got.Verdict != tc.default_ {
				t.Errorf("default: %v %v, want %v", got.Verdict, got.Reasons, tc.default_)
			}
		})
	}
}

// TestRainbowModeWithoutGraph: a cluster or job not read by the readers
// carries nothing for rainbow's search, and matches nothing.
func TestRainbowModeWithoutGraph(t *testing.T) {
	j := Job{Name: "j", Nodes: 1}
	c := Cluster{Name: "c", Nodes: 4, Cores: 8}
	if got := (Rules{Rainbow: true}).Match(&j, &c); got.Verdict != Never {
		t.Fatalf("got %v, want Never", got.Verdict)
	}
	if got := (Rules{}).Match(&j, &c); got.Verdict != Matched {
		t.Fatalf("default: got %v, want Matched", got.Verdict)
	}
}

// TestYAML11Scalars: the strings rainbow's reader makes of plain scalars.
func TestYAML11Scalars(t *testing.T) {
	for in, want := range map[string]string{
		"1.10": "1.1", "010": "8", "0x10": "16", "1_000": "1000", "yes": "true", "Off": "false",
		"~": "", "1.2.3": "1.2.3", "1.2.x": "1.2.x", "abc": "abc", "1e3": "1000", "-0b11": "-3",
		".5": "0.5", "1.23456789": "1.2345679", "+7": "7", "v1": "v1", "18446744073709551615": "18446744073709551615",
	} {
		if got := yaml11String(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

// TestRainbowModePool: a pool with Rainbow rules matches as the mode does,
// holds the nodes of the chosen cluster and reports NotNow when none are
// free; a requirement on a subsystem no cluster has (top level, which
// rainbow does not read) does not refuse the job.
func TestRainbowModePool(t *testing.T) {
	c := oneNodeCluster(t)
	c.State = map[string]float64{"nodes_free": 1}
	p, err := NewPool([]Cluster{c}, Rules{Rainbow: true})
	if err != nil {
		t.Fatal(err)
	}
	spec := "version: 1\nrequires:\n- {name: gpu, field: model, match: a100}\nresources:\n  job:\n    type: node\n    replicas: 1\n    with:\n    - {type: core, count: 2}\n"
	submit := func(name string) Assignment {
		t.Helper()
		j, err := ReadJobspec(strings.NewReader("name: "+name+"\n"+spec), name)
		if err != nil {
			t.Fatal(err)
		}
		a, err := p.Submit(&j, First{})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	if a := submit("j1"); len(a.Clusters) != 1 || a.Results[0].Verdict != Matched {
		t.Fatalf("j1: %+v", a)
	}
	if a := submit("j2"); len(a.Clusters) != 0 || a.Results[0].Verdict != NotNow {
		t.Fatalf("j2: %+v", a)
	}
}

// FuzzRainbowMode: whatever ReadJobspec returns, with an error or
// without, the Rainbow mode decides on it without a panic, and as often
// as asked the same way; what comes with an error the default rules never
// match.
func FuzzRainbowMode(f *testing.F) {
	var buf bytes.Buffer
	if err := WriteCluster(&buf, &Cluster{Name: "c", Nodes: 2, Cores: 4}); err != nil {
		f.Fatal(err)
	}
	c, err := ReadCluster(strings.NewReader(buf.String()), "c")
	if err != nil {
		f.Fatal(err)
	}
	c.Subsystems = map[string]*Subsystem{
		"io":    {Name: "io", Vertices: []Vertex{{ID: "io1", Fields: map[string]string{"type": "shm"}, Parents: []string{"2", "3"}}}},
		"spack": {Name: "spack", Vertices: []Vertex{{ID: "s1", Fields: map[string]string{"version": "1.2.5"}, Parents: []string{"2"}}}},
	}
	f.Add("version: 1\nresources:\n  job:\n    type: node\n    replicas: 2\n    requires:\n    - {name: spack, field: version, min: 1.10, max: 1.2.x}\n    with:\n    - {type: core, count: 3, requires: [{name: io, field: type, match: shm}]}\n")
	f.Add("version: 1\nresources:\n  a:\n    type: node\n    count: 1\n    with:\n    - type: slot\n      count: 1\n      label: x\n      with:\n      - {type: core, count: 1}\n  b:\n    type: rack\n    replicas: 1\n    schedule: yes\n    with:\n    - {type: node, count: 010}\n")
	f.Fuzz(func(t *testing.T, spec string) {
		j, err := ReadJobspec(strings.NewReader(spec), "f.yaml")
		if err != nil {
			if got := (Rules{}).Match(&j, &c); got.Verdict != Never {
				t.Fatalf("default rules: %v on a job read with %v", got.Verdict, err)
			}
		}
		r := Rules{Rainbow: true}
		if a, b := r.Match(&j, &c), r.Match(&j, &c); a.Verdict != b.Verdict {
			t.Fatalf("%v then %v", a.Verdict, b.Verdict)
		}
	})
}

// TestRainbowModeCycle: contains edges that form a cycle end the search
// with no match instead of running without end.
func TestRainbowModeCycle(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"graph": {"nodes": {"0": {"metadata": {"type": "cluster", "basename": "c"}}`)
	const n = 30
	for i := 1; i <= n; i++ {
		b.WriteString(`, "` + strconv.Itoa(i) + `": {"metadata": {"type": "node"}}`)
	}
	b.WriteString(`}, "edges": [{"source": "0", "target": "1", "relation": "contains"}`)
	for i := 1; i <= n; i++ {
		for k := 1; k <= n; k++ {
			if i != k {
				b.WriteString(`, {"source": "` + strconv.Itoa(i) + `", "target": "` + strconv.Itoa(k) + `", "relation": "contains"}`)
			}
		}
	}
	b.WriteString("]}}")
	c, err := ReadCluster(strings.NewReader(b.String()), "cycle.json")
	if err != nil {
		t.Skip("ReadCluster refuses the cycle:", err)
	}
	j, err := ReadJobspec(strings.NewReader("version: 1\nresources:\n  job:\n    type: node\n    replicas: 1\n    with:\n    - {type: core, count: 1}\n"), "j.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c.rainbow.counts["core"] = 1 // past the top-level count check
	if got := (Rules{Rainbow: true}).Match(&j, &c); got.Verdict != Never {
		t.Fatalf("got %v, want Never", got.Verdict)
	}
}

// TestRainbowModeLenient: documents rainbow loads and the readers refuse.
// The reader's error comes with a value the Rainbow rules match as
// rainbow does (a requires entry without a name, a field or a value is
// dropped; an orphan vertex counts in the totals; an edge other than
// "contains" is ignored, dangling or not), and the default rules match it
// against nothing. A dangling "contains" edge rainbow refuses too.
func TestRainbowModeLenient(t *testing.T) {
	graph := oneNodeGraph(t)
	orphan := strings.Replace(graph, `"nodes": {`, `"nodes": {"77": {"label": "77", "metadata": {"type": "node"}},`, 1)
	inEdge := strings.Replace(graph, `"edges": [`, `"edges": [{"source": "98", "target": "0", "relation": "in"},`, 1)
	containsEdge := strings.Replace(graph, `"edges": [`, `"edges": [{"source": "0", "target": "98", "relation": "contains"},`, 1)
	node := func(body string) string {
		return "version: 1\nresources:\n  job:\n    type: node\n    replicas: 1\n" + body
	}
	for _, tc := range []struct {
		name           string
		jobspec, graph string
		rainbow        Verdict
	}{
		{"an entry without a field", node("    requires:\n    - {name: io, match: nvme}\n"), graph, Matched},
		{"an entry without a name", node("    requires:\n    - {field: type, match: nvme}\n"), graph, Matched},
		{"an entry without match, min or max", node("    requires:\n    - {name: io, field: type}\n"), graph, Matched},
		{"an entry without a field after one with", node("    requires:\n    - {name: io, field: type, match: nvme}\n    - {name: io, match: shm}\n"), graph, Never},
		{"an unknown key", node("    reqiures:\n    - {name: io, field: type, match: nvme}\n"), graph, Matched},
		{"an orphan node counts", "version: 1\nresources:\n  job:\n    type: node\n    replicas: 2\n    with:\n    - {type: core, count: 1}\n", orphan, Matched},
		{"a dangling in edge is ignored", node(""), inEdge, Matched},
		{"a dangling contains edge is refused", node(""), containsEdge, Never},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, jerr := ReadJobspec(strings.NewReader(tc.jobspec), "case.yaml")
			c, cerr := ReadCluster(strings.NewReader(tc.graph), "c")
			if !errors.Is(jerr, ErrSchema) && !errors.Is(cerr, ErrSchema) {
				t.Fatalf("the readers accept the case (%v, %v)", jerr, cerr)
			}
			for _, err := range []error{jerr, cerr} {
				if err != nil && !errors.Is(err, ErrSchema) {
					t.Fatal(err)
				}
			}
			c.Subsystems = map[string]*Subsystem{
				"io": {Name: "io", Vertices: []Vertex{{ID: "io1", Fields: map[string]string{"type": "shm"}, Parents: []string{"2"}}}},
			}
			if got := (Rules{Rainbow: true}).Match(&j, &c); got.Verdict != tc.rainbow {
				t.Errorf("Rainbow mode: %v, want %v", got.Verdict, tc.rainbow)
			}
			if got := (Rules{}).Match(&j, &c); got.Verdict != Never || len(got.Reasons) != 0 {
				t.Errorf("default: %v %v, want Never without reasons", got.Verdict, got.Reasons)
			}
			p, err := NewPool([]Cluster{c}, Rules{})
			if err != nil {
				t.Fatal(err)
			}
			if cerr != nil {
				if got := p.Satisfying(nil, Requirement{Subsystem: "io", Field: "type", Value: "shm"}); len(got) != 0 {
					t.Errorf("default Satisfying: %v, want none", got)
				}
			}
		})
	}
}

// TestRainbowModeRefusedGraphs: a dominant graph without edges is one
// rainbow refuses to load, which the Rainbow rules therefore never match.
func TestRainbowModeRefusedGraphs(t *testing.T) {
	r := Rules{Rainbow: true}
	lone, err := ReadCluster(strings.NewReader(`{"graph": {"nodes": {"0": {"metadata": {"type": "cluster", "basename": "c"}}}}}`), "lone.json")
	if err != nil {
		t.Fatal(err)
	}
	empty, err := ReadJobspec(strings.NewReader("version: 1\n"), "empty.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Match(&empty, &lone); got.Verdict != Never {
		t.Errorf("no edges: %v, want Never", got.Verdict)
	}
	if got := (Rules{}).Match(&empty, &lone); got.Verdict != Matched {
		t.Errorf("no edges, default: %v, want Matched", got.Verdict)
	}
}

// TestRainbowModeLenientSubsystem: a subsystem graph with an orphan vertex
// or an edge other than "contains" from a vertex in neither graph is
// refused by ReadSubsystem and loaded by rainbow; what comes back with the
// error counts under the Rainbow rules and is no subsystem under the
// default rules.
func TestRainbowModeLenientSubsystem(t *testing.T) {
	c := oneNodeCluster(t)
	var buf bytes.Buffer
	if err := WriteSubsystem(&buf, &Subsystem{Name: "io", Vertices: []Vertex{{ID: "io1", Fields: map[string]string{"type": "shm"}, Parents: []string{"2"}}}}); err != nil {
		t.Fatal(err)
	}
	io := buf.String()
	j, err := ReadJobspec(strings.NewReader("version: 1\nresources:\n  job:\n    type: node\n    replicas: 1\n    requires:\n    - {name: io, field: type, match: shm}\n"), "j.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string]string{
		"orphan":    strings.Replace(io, `"nodes": {`, `"nodes": {"io9": {"metadata": {"type": "shm"}}, `, 1),
		"in edge":   strings.Replace(io, `"edges": [`, `"edges": [{"source": "io8", "target": "2", "relation": "in"}, `, 1),
		"uses edge": strings.Replace(io, `"edges": [`, `"edges": [{"source": "io8", "target": "io1", "relation": "uses"}, `, 1),
	} {
		t.Run(name, func(t *testing.T) {
			if doc == io {
				t.Fatal("the document did not change")
			}
			s, err := ReadSubsystem(strings.NewReader(doc), "io.json", "io")
			if !errors.Is(err, ErrSchema) {
				t.Fatalf("ReadSubsystem: %v, want ErrSchema", err)
			}
			c.Subsystems = map[string]*Subsystem{"io": &s}
			if got := (Rules{Rainbow: true}).Match(&j, &c); got.Verdict != Matched {
				t.Errorf("Rainbow mode: %v, want Matched", got.Verdict)
			}
			if got := (Rules{}).Match(&j, &c); got.Verdict != Never || len(got.Reasons) != 1 || got.Reasons[0].Kind != MissingSubsystem {
				t.Errorf("default: %v %v, want Never, missing subsystem", got.Verdict, got.Reasons)
			}
		})
	}
	bad := strings.Replace(io, `"edges": [`, `"edges": [{"source": "2", "target": "io8", "relation": "contains"}, `, 1)
	if s, err := ReadSubsystem(strings.NewReader(bad), "io.json", "io"); !errors.Is(err, ErrSchema) || len(s.Vertices) != 0 {
		t.Errorf("a dangling contains edge: %v, %d vertices; want ErrSchema and none", err, len(s.Vertices))
	}
}

// oneNodeGraph is WriteCluster's graph of one node with two cores (ids:
// cluster 0, rack 1, node 2, socket 3, cores 4 and 5).
func oneNodeGraph(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteCluster(&buf, &Cluster{Name: "c", Nodes: 1, Cores: 2}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// oneNodeCluster is oneNodeGraph as ReadCluster reads it.
func oneNodeCluster(t *testing.T) Cluster {
	t.Helper()
	c, err := ReadCluster(strings.NewReader(oneNodeGraph(t)), "c")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRainbowModeAliasBomb: a jobspec whose aliases expand too far matches
// nothing under the Rainbow rules either, whether the reader's walk met the
// expansion itself or stopped first at another fault (an unknown key): the
// reading as rainbow reads is held to the same limit.
func TestRainbowModeAliasBomb(t *testing.T) {
	bomb := strings.Replace(aliasBomb(), "resources:\n  - *a10\n", "resources:\n  job: *a10\n", 1)
	c, err := ReadCluster(strings.NewReader(oneNodeGraph(t)), "c")
	if err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string]string{
		"bomb":                bomb,
		"unknown key first":   strings.Replace(bomb, "version: 1\n", "version: 1\nzzz: 1\n", 1),
		"incomplete requires": strings.Replace(bomb, "{type: core, count: 1}", "{type: core, count: 1, requires: [{name: io, match: x}]}", 1),
	} {
		t.Run(name, func(t *testing.T) {
			j, err := ReadJobspec(strings.NewReader(doc), "bomb.yaml")
			if err == nil {
				t.Fatal("the bomb was read")
			}
			if got := (Rules{Rainbow: true}).Match(&j, &c); got.Verdict != Never {
				t.Errorf("Rainbow mode: %v, want Never (%v)", got.Verdict, err)
			}
		})
	}
}

// TestWriteRefusesUnread: a Job or Cluster returned with a reading error
// cannot be written back as a valid document.
func TestWriteRefusesUnread(t *testing.T) {
	j, err := ReadJobspec(strings.NewReader("version: 1\nresources:\n  job:\n    type: node\n    replicas: 1\n    requires:\n    - {name: io, match: shm}\n"), "j.yaml")
	if err == nil {
		t.Fatal("an entry without a field was read")
	}
	if err := WriteJobspec(io.Discard, &j); !errors.Is(err, ErrSchema) {
		t.Errorf("WriteJobspec of a refused job: %v, want ErrSchema", err)
	}
	graph := strings.Replace(oneNodeGraph(t), `"edges": [`, `"edges": [{"source": "0", "target": "98", "relation": "contains"},`, 1)
	c, err := ReadCluster(strings.NewReader(graph), "c")
	if err == nil {
		t.Fatal("a dangling contains edge was read")
	}
	if err := WriteCluster(io.Discard, &c); !errors.Is(err, ErrSchema) {
		t.Errorf("WriteCluster of a refused cluster: %v, want ErrSchema", err)
	}
}
