package matcher

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func stateClusters() []Cluster {
	mk := func(name string, free, cost, mem float64) Cluster {
		return Cluster{Name: name, State: map[string]float64{"nodes_free": free, "cost_per_node_hour": cost, "memory_per_node": mem},
			Subsystems: map[string]*Subsystem{"arch": {Name: "arch", Vertices: []Vertex{{Fields: map[string]string{"value": "x86_64"}}}}}}
	}
	// Deliberately not in name order: the pool sorts.
	return []Cluster{mk("c", 0, 1, 100), mk("a", 4, 3, 200), mk("b", 2, 2, 400)}
}

func names(cs []*Cluster) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func TestSimpleSelectors(t *testing.T) {
	p, err := NewPool(stateClusters(), Rules{})
	if err != nil {
		t.Fatal(err)
	}
	cands := p.Clusters()
	j := &Job{}
	for _, tt := range []struct {
		name string
		sel  Selector
		want []string
	}{
		{"first", First{}, []string{"a"}},
		{"last", Last{}, []string{"c"}},
		{"all", All{}, []string{"a", "b", "c"}},
	} {
		got, err := tt.sel.Select(j, cands)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, names(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	// Random: same seed, same sequence; every candidate reachable.
	draw := func(seed uint64) []string {
		s := Random{Rand: rand.New(rand.NewPCG(seed, 0))}
		var out []string
		for range 60 {
			got, _ := s.Select(j, cands)
			out = append(out, got[0].Name)
		}
		return out
	}
	a, b := draw(7), draw(7)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("Random not reproducible:\n%s", diff)
	}
	seen := map[string]bool{}
	for _, n := range a {
		seen[n] = true
	}
	if len(seen) != 3 {
		t.Errorf("Random reached %v in 60 draws, want all 3", seen)
	}
}

func TestConstraint(t *testing.T) {
	p, err := NewPool(stateClusters(), Rules{})
	if err != nil {
		t.Fatal(err)
	}
	cands := p.Clusters()
	j := &Job{Params: map[string]float64{"seconds_per_gb": 36}}
	tests := []struct {
		name  string
		prios []Priority
		want  []string
	}{
		{"filter keeps free clusters", []Priority{{1, []Step{{Filter: "nodes_free > 0"}}}}, []string{"a", "b"}},
		{"calc and sort ascending", []Priority{{1, []Step{
			{Filter: "nodes_free > 0"},
			{Calc: "build_cost=cost_per_node_hour * memory_per_node * seconds_per_gb / 3600"},
			{SortAsc: "build_cost"},
			{Select: "first"},
		}}}, []string{"a"}}, // a: 3*200*36/3600 = 6, b: 2*400*36/3600 = 8
		{"sort descending then last", []Priority{{1, []Step{{SortDesc: "memory_per_node"}, {Select: "last"}}}}, []string{"c"}},
		{"fall through to the next priority", []Priority{
			{2, []Step{{Filter: "cost_per_node_hour < 2"}}},
			{1, []Step{{Filter: "nodes_free > 10"}}},
		}, []string{"c"}},
		{"nothing left anywhere", []Priority{{1, []Step{{Filter: "nodes_free > 10"}}}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewConstraint(tt.prios, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Select(j, cands)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, names(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestConstraintMissingKey: a cluster whose state lacks a key a step reads
// is skipped for that step, as rainbow does, instead of failing the
// selection for every cluster (issue 16).
func TestConstraintMissingKey(t *testing.T) {
	cl := stateClusters()
	cl[1].State["gpus_free"] = 2 // only "a" has GPUs
	cl[2].State["gpus_free"] = 8 // and "b"
	p, err := NewPool(cl, Rules{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		steps []Step
		want  []string
	}{
		{"filter", []Step{{Filter: "gpus_free > 1"}}, []string{"a", "b"}},
		{"filter with a builtin", []Step{{Filter: "max(gpus_free, 1) > 4"}}, []string{"b"}},
		{"calc then sort", []Step{{Calc: "score=gpus_free * 2"}, {SortDesc: "score"}, {Select: "first"}}, []string{"b"}},
		{"sort on a key some lack", []Step{{SortAsc: "gpus_free"}}, []string{"a", "b"}},
		{"nobody has it", []Step{{Filter: "undefined_var > 1"}}, nil},
		{"nobody has the sort key", []Step{{SortAsc: "undefined_key"}}, nil},
	} {
		c, err := NewConstraint([]Priority{{1, tc.steps}}, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := c.Select(&Job{}, p.Clusters())
		if err != nil || !slices.Equal(names(got), tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.name, names(got), err, tc.want)
		}
	}
}

func TestConstraintErrors(t *testing.T) {
	cands := func() []*Cluster { p, _ := NewPool(stateClusters(), Rules{}); return p.Clusters() }()
	compileErrs := []Priority{
		{1, []Step{{Filter: "nodes_free >"}}},
		{1, []Step{{Calc: "no assignment here"}}},
		{1, []Step{{Calc: "a == b"}}},
		{1, []Step{{Select: "best"}}},
		{1, []Step{{Select: "random"}}}, // no generator
		{1, []Step{{}}},
		{1, []Step{{Filter: "true", Select: "first"}}},
	}
	for i, p := range compileErrs {
		if _, err := NewConstraint([]Priority{p}, nil); !errors.Is(err, ErrExpr) {
			t.Errorf("case %d: error %v, want ErrExpr", i, err)
		}
	}
	runErrs := []Priority{
		{1, []Step{{Filter: "nodes_free + 1"}}}, // not a bool
		{1, []Step{{Calc: "x=\"text\""}}},       // not a number
	}
	for i, p := range runErrs {
		c, err := NewConstraint([]Priority{p}, nil)
		if err != nil {
			t.Fatalf("case %d: compile: %v", i, err)
		}
		if _, err := c.Select(&Job{}, cands); !errors.Is(err, ErrExpr) {
			t.Errorf("case %d: error %v, want ErrExpr", i, err)
		}
	}
}

func TestParsePriorities(t *testing.T) {
	// The priorities option of rainbow's docs/algorithms.md example.
	text := []byte(`- priority: 1
  steps:
  - filter: "nodes_free > 0"
  - calc: "build_cost=(cost_per_node_hour * (memory_per_node * seconds_per_gb)/60/60)"
  - sort_descending: build_cost
  - select: random
- priority: 2
  steps:
  - filter: "nodes_free > 0"
`)
	ps, err := ParsePriorities(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []Priority{
		{1, []Step{{Filter: "nodes_free > 0"}, {Calc: "build_cost=(cost_per_node_hour * (memory_per_node * seconds_per_gb)/60/60)"},
			{SortDesc: "build_cost"}, {Select: "random"}}},
		{2, []Step{{Filter: "nodes_free > 0"}}},
	}
	if diff := cmp.Diff(want, ps); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := NewConstraint(ps, rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Error(err)
	}
	if _, err := ParsePriorities([]byte("- priority: [")); !errors.Is(err, ErrSyntax) {
		t.Errorf("bad YAML: %v, want ErrSyntax", err)
	}
	if _, err := ParsePriorities([]byte("- priority: 1\n  steps:\n  - fitler: nodes_free > 0\n")); !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), "fitler") {
		t.Errorf("typo in a step: %v, want ErrSchema naming fitler", err)
	}
}

type constModel map[string]float64

func (m constModel) Predict(pkg string, mem float64) (float64, error) {
	s, ok := m[pkg]
	if !ok {
		return 0, ErrUnknownPackage
	}
	return s * mem, nil
}

func TestCostAware(t *testing.T) {
	p, _ := NewPool(stateClusters(), Rules{})
	// predicted seconds = 18 × memory; cost = seconds/3600 × rate:
	// a: 3600 s × 3 = 3, b: 7200 s × 2 = 4, c: 1800 s × 1 = 0.5.
	got, err := CostAware{Model: constModel{"zlib": 18}}.Select(&Job{Package: "zlib"}, p.Clusters())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"c"}, names(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := (CostAware{Model: constModel{}}).Select(&Job{Package: "zlib"}, p.Clusters()); !errors.Is(err, ErrUnknownPackage) {
		t.Errorf("unknown package: %v", err)
	}
}

func TestPoolCapacity(t *testing.T) {
	input := stateClusters()
	for _, tt := range []struct {
		replacement bool
		want        []string
	}{
		// a has 4 free nodes: two 2-node jobs fill it, then b (2), then nothing.
		{false, []string{"a", "a", "b", ""}},
		{true, []string{"a", "a", "a", "a"}},
	} {
		p, err := NewPool(input, Rules{})
		if err != nil {
			t.Fatal(err)
		}
		p.Replacement = tt.replacement
		var got []string
		for range 4 {
			a, err := p.Submit(&Job{Nodes: 2}, First{})
			if err != nil {
				t.Fatal(err)
			}
			name := ""
			if len(a.Clusters) == 1 {
				name = a.Clusters[0]
			}
			got = append(got, name)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("replacement=%v (-want +got):\n%s", tt.replacement, diff)
		}
	}
	if input[1].State["nodes_free"] != 4 {
		t.Error("NewPool must copy the caller's state")
	}
	// Distinguish never from not-now.
	p, _ := NewPool(input, Rules{})
	a, _ := p.Submit(&Job{Nodes: 2}, All{})
	verdicts := map[string]Verdict{}
	for _, r := range a.Results {
		verdicts[r.Cluster] = r.Verdict
	}
	if diff := cmp.Diff(map[string]Verdict{"a": Matched, "b": Matched, "c": NotNow}, verdicts); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
}

func TestPoolErrors(t *testing.T) {
	if _, err := NewPool(nil, Rules{}); !errors.Is(err, ErrNoClusters) {
		t.Errorf("empty: %v", err)
	}
	if _, err := NewPool([]Cluster{{Name: "x"}, {Name: "x"}}, Rules{}); err == nil {
		t.Error("duplicate names should fail")
	}
	p, _ := NewPool(stateClusters(), Rules{})
	_, err := p.Submit(&Job{Name: "j", Requires: []Requirement{{Subsystem: "gpu", Field: "model", Op: Exists}}}, First{})
	if !errors.Is(err, ErrUnknownSubsystem) {
		t.Errorf("unknown subsystem: %v", err)
	}
}

// TestPoolSatisfying: the bulk check agrees with Match on every cluster
// and ignores capacity.
func TestPoolSatisfying(t *testing.T) {
	mk := func(name, io, spack string) Cluster {
		return Cluster{Name: name, State: map[string]float64{DefaultFreeKey: 0}, Subsystems: map[string]*Subsystem{
			"io":    {Name: "io", Vertices: []Vertex{{Fields: map[string]string{"type": io}}}},
			"spack": {Name: "spack", Vertices: []Vertex{{Fields: map[string]string{"version": spack}}}},
		}}
	}
	p, err := NewPool([]Cluster{mk("c", "nfs", "0.7.0"), mk("a", "shm", "0.5.2"), mk("b", "shm", "0.6.1")}, Rules{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		r    Requirement
		want []int // indices in name order: a, b, c
	}{
		{Requirement{Subsystem: "io", Field: "type", Op: Equal, Value: "shm"}, []int{0, 1}},
		{Requirement{Subsystem: "io", Field: "type", Op: In, Values: []string{"nfs", "xfs"}}, []int{2}},
		{Requirement{Subsystem: "spack", Field: "version", Op: InRange, Min: "0.5.0", Max: "0.6.1"}, []int{0, 1}},
		{Requirement{Subsystem: "nope", Field: "type", Op: Exists}, nil},
	} {
		got := p.Satisfying(nil, tc.r)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v: Satisfying %v, want %v", tc.r, got, tc.want)
		}
		// Match says the same, but NotNow: the clusters have no free nodes.
		var viaMatch []int
		for i, c := range p.Clusters() {
			j := Job{Requires: []Requirement{tc.r}}
			if res := (Rules{}).Match(&j, c); res.Verdict == NotNow {
				viaMatch = append(viaMatch, i)
			}
		}
		if !slices.Equal(got, viaMatch) {
			t.Errorf("%v: Satisfying %v, Match %v", tc.r, got, viaMatch)
		}
	}
}
