package matcher

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// badSelector returns what it was given, or a copy, or a cluster it was
// never offered.
type badSelector func(c []*Cluster) []*Cluster

func (s badSelector) Select(_ *Job, c []*Cluster) ([]*Cluster, error) { return s(c), nil }

// TestPoolRefusesForeignSelections: a selector that returns a copy of a
// candidate, or a cluster the pool does not hold, must not change any
// count: Submit refuses it.
func TestPoolRefusesForeignSelections(t *testing.T) {
	for _, tc := range []struct {
		name string
		sel  badSelector
	}{
		{"copy", func(c []*Cluster) []*Cluster { cp := *c[0]; return []*Cluster{&cp} }},
		{"unregistered", func([]*Cluster) []*Cluster {
			return []*Cluster{{Name: "ghost", State: map[string]float64{"nodes_free": 1}}}
		}},
		{"registered but not offered", func(c []*Cluster) []*Cluster { return []*Cluster{{Name: "c00"}} }},
		{"nil", func([]*Cluster) []*Cluster { return []*Cluster{nil} }},
		{"twice", func(c []*Cluster) []*Cluster { return []*Cluster{c[0], c[0]} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPool(liveClusters(2, 4), Rules{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Submit(&Job{Name: "j", Nodes: 3}, tc.sel)
			if !errors.Is(err, ErrSelector) {
				t.Fatalf("Submit: %v, want ErrSelector", err)
			}
			for _, n := range []string{"c00", "c01"} {
				if st, _ := p.State(n); st["nodes_free"] != 4 {
					t.Errorf("%s: %v free after a refused selection, want 4", n, st["nodes_free"])
				}
			}
			if len(p.allocations()) != 0 {
				t.Errorf("allocations %v after a refused selection", p.allocations())
			}
		})
	}
}

// TestPoolStateBounds: free nodes never exceed the cluster's total nor go
// below zero, whatever a cluster reports; NaN and infinities are refused.
func TestPoolStateBounds(t *testing.T) {
	p, err := NewPool(liveClusters(1, 4), Rules{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Submit(&Job{Name: "held", Nodes: 3}, First{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		state map[string]float64
	}{
		{"negative", map[string]float64{"nodes_free": -1}},
		{"NaN", map[string]float64{"nodes_free": math.NaN()}},
		{"+Inf", map[string]float64{"nodes_free": math.Inf(1)}},
		{"above total", map[string]float64{"nodes_free": 7}},
		// 3 of the 4 nodes are held by this pool's job: a report of 4 free
		// is stale and would over-commit the cluster.
		{"stale", map[string]float64{"nodes_free": 4}},
		{"NaN other key", map[string]float64{"cost": math.NaN()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := p.UpdateState("c00", tc.state); !errors.Is(err, ErrState) {
				t.Fatalf("UpdateState(%v): %v, want ErrState", tc.state, err)
			}
			if st, _ := p.State("c00"); st["nodes_free"] != 1 || st["cost"] != 0 {
				t.Errorf("state %v after a refused update, want nodes_free 1, cost 0", st)
			}
		})
	}
	if err := p.UpdateState("c00", map[string]float64{"nodes_free": 0}); err != nil {
		t.Errorf("a valid update: %v", err)
	}
	if err := p.Release("held"); err != nil {
		t.Fatal(err)
	}
	if st, _ := p.State("c00"); st["nodes_free"] != 3 {
		t.Errorf("after release: %v free, want 3", st["nodes_free"])
	}
	for _, c := range []Cluster{
		{Name: "neg", Nodes: 2, State: map[string]float64{"nodes_free": -2}},
		{Name: "over", Nodes: 2, State: map[string]float64{"nodes_free": 3}},
		{Name: "nan", State: map[string]float64{"nodes_free": math.NaN()}},
	} {
		if err := p.Register(c); !errors.Is(err, ErrState) {
			t.Errorf("Register(%s): %v, want ErrState", c.Name, err)
		}
	}
	if _, err := p.Submit(&Job{Name: "neg", Nodes: -1}, First{}); err == nil {
		t.Error("a job asking for -1 nodes was accepted")
	}
}

// TestJobspecUnknownType: a resource type no cluster model knows (a
// misspelt core) is refused, naming the known types.
func TestJobspecUnknownType(t *testing.T) {
	doc := "version: 1\nresources:\n- type: node\n  count: 1\n  with:\n  - type: cores\n    count: 2\n"
	_, err := ReadJobspec(strings.NewReader(doc), "cores.yaml")
	if !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), `"core"`) || !strings.Contains(err.Error(), "resources[0].with[0].type") {
		t.Fatalf("ReadJobspec: %v, want ErrSchema at resources[0].with[0].type naming the known types", err)
	}
}
