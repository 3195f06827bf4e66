package matcher

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
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

// sortedClusters returns stateClusters in name order, as a Pool hands
// them to a selector.
func sortedClusters() []*Cluster {
	cs := stateClusters()
	slices.SortFunc(cs, func(a, b Cluster) int { return strings.Compare(a.Name, b.Name) })
	out := make([]*Cluster, len(cs))
	for i := range cs {
		out[i] = &cs[i]
	}
	return out
}

func TestSimpleSelectors(t *testing.T) {
	cands := sortedClusters()
	j := &Job{}
	for _, tt := range []struct {
		name string
		sel  Selector
		want []string
	}{
		{"first", First{}, []string{"a"}},
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

func TestPoolCapacity(t *testing.T) {
	input := stateClusters()
	for _, tt := range []struct {
		replacement bool
		want        []string
	}{
		// a has 4 free nodes: two 2-node jobs fill it, then b (2), then nothing.
		{false, []string{"a", "a", "b", ""}},
		// Released after each submission: capacity is never consumed.
		{true, []string{"a", "a", "a", "a"}},
	} {
		p, err := NewPool(input, Rules{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i := range 4 {
			j := &Job{Name: strconv.Itoa(i), Nodes: 2}
			a, err := p.Submit(j, First{})
			if err != nil {
				t.Fatal(err)
			}
			name := ""
			if len(a.Clusters) == 1 {
				name = a.Clusters[0]
				if tt.replacement {
					if err := p.Release(j.Name); err != nil {
						t.Fatal(err)
					}
				}
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
	if _, err := NewPool([]Cluster{{Name: "x"}, {Name: "x"}}, Rules{}); !errors.Is(err, ErrClusterExists) {
		t.Errorf("duplicate names: %v", err)
	}
	p, _ := NewPool(stateClusters(), Rules{})
	_, err := p.Submit(&Job{Name: "j", Requires: []Requirement{{Subsystem: "gpu", Field: "model", Op: Equal, Value: "a100"}}}, First{})
	if !errors.Is(err, ErrUnknownSubsystem) {
		t.Errorf("unknown subsystem: %v", err)
	}
}

// TestPoolSatisfying: the bulk check agrees with Match on every cluster
// and ignores capacity.
func TestPoolSatisfying(t *testing.T) {
	mk := func(name, io, spack string) Cluster {
		return Cluster{Name: name, State: map[string]float64{freeKey: 0}, Subsystems: map[string]*Subsystem{
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
		{Requirement{Subsystem: "io", Field: "type", Op: Equal, Value: "nfs"}, []int{2}},
		{Requirement{Subsystem: "spack", Field: "version", Op: InRange, Min: "0.5.0", Max: "0.6.1"}, []int{0, 1}},
		{Requirement{Subsystem: "nope", Field: "type", Op: Equal, Value: "nfs"}, nil},
	} {
		got := p.Satisfying(nil, tc.r)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v: Satisfying %v, want %v", tc.r, got, tc.want)
		}
		// Match says the same, but NotNow: the clusters have no free nodes.
		var viaMatch []int
		a, err := p.Submit(&Job{Name: "j", Requires: []Requirement{tc.r}}, All{})
		if err != nil && !errors.Is(err, ErrUnknownSubsystem) {
			t.Fatal(err)
		}
		for i, res := range a.Results {
			if res.Verdict == NotNow {
				viaMatch = append(viaMatch, i)
			}
		}
		if !slices.Equal(got, viaMatch) {
			t.Errorf("%v: Satisfying %v, Match %v", tc.r, got, viaMatch)
		}
	}
}
