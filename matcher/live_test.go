package matcher

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

func liveClusters(n int, free float64) []Cluster {
	var cs []Cluster
	for i := range n {
		cs = append(cs, Cluster{Name: fmt.Sprintf("c%02d", i), Nodes: int(free), State: map[string]float64{"nodes_free": free, "cost": float64(i)},
			Subsystems: map[string]*Subsystem{"arch": {Name: "arch", Vertices: []Vertex{{Fields: map[string]string{"value": "x86_64"}}}}}})
	}
	return cs
}

func mustPool(t *testing.T, rules Rules) *Pool {
	t.Helper()
	p, err := NewPool(nil, rules)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// clusterNames returns the registered clusters' names, sorted.
func (p *Pool) clusterNames() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.sorted())
}

// allocations returns each allocated job's cluster.
func (p *Pool) allocations() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]string{}
	for j, a := range p.allocs {
		out[j] = a.cluster
	}
	return out
}

func TestLivePoolLifecycle(t *testing.T) {
	p := mustPool(t, Rules{})
	for _, c := range liveClusters(2, 4) {
		if err := p.Register(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Register(liveClusters(1, 4)[0]); !errors.Is(err, ErrClusterExists) {
		t.Errorf("second c00: %v", err)
	}
	first := First{}
	a, err := p.Submit(&Job{Name: "j1", Nodes: 3}, first)
	if err != nil || len(a.Clusters) != 1 || a.Clusters[0] != "c00" {
		t.Fatalf("j1: %+v %v", a, err)
	}
	if _, err := p.Submit(&Job{Name: "j1", Nodes: 1}, first); !errors.Is(err, ErrJobExists) {
		t.Errorf("j1 again: %v", err)
	}
	// c00 has 1 node left: a 2-node job goes to c01.
	a, _ = p.Submit(&Job{Name: "j2", Nodes: 2}, first)
	if len(a.Clusters) != 1 || a.Clusters[0] != "c01" {
		t.Errorf("j2 on %v", a.Clusters)
	}
	if st, _ := p.State("c00"); st["nodes_free"] != 1 {
		t.Errorf("c00 free %v, want 1", st["nodes_free"])
	}
	if err := p.Release("j1"); err != nil {
		t.Fatal(err)
	}
	if err := p.Release("j1"); !errors.Is(err, ErrNoAllocation) {
		t.Errorf("release twice: %v", err)
	}
	if st, _ := p.State("c00"); st["nodes_free"] != 4 {
		t.Errorf("c00 free %v after release, want 4", st["nodes_free"])
	}
	// A state update changes what matches.
	if err := p.UpdateState("c00", map[string]float64{"nodes_free": 0}); err != nil {
		t.Fatal(err)
	}
	a, _ = p.Submit(&Job{Name: "j3", Nodes: 1}, first)
	if len(a.Clusters) != 1 || a.Clusters[0] != "c01" {
		t.Errorf("j3 on %v with c00 full", a.Clusters)
	}
	lost, err := p.Remove("c01")
	if err != nil || fmt.Sprint(lost) != "[j2 j3]" {
		t.Errorf("Remove c01: lost %v, %v", lost, err)
	}
	if _, err := p.Remove("c01"); !errors.Is(err, ErrNoClusters) {
		t.Errorf("Remove twice: %v", err)
	}
	if fmt.Sprint(p.clusterNames()) != "[c00]" || len(p.allocations()) != 0 {
		t.Errorf("clusters %v, allocations %v", p.clusterNames(), p.allocations())
	}
	if err := p.UpdateState("nope", nil); !errors.Is(err, ErrNoClusters) {
		t.Errorf("update unknown: %v", err)
	}
	if _, err := p.Submit(&Job{Name: "j4", Requires: []Requirement{{Subsystem: "io", Field: "type", Op: Equal, Value: "shm"}}}, first); !errors.Is(err, ErrUnknownSubsystem) {
		t.Errorf("unknown subsystem: %v", err)
	}
}

// TestLivePoolConcurrent: many goroutines submit, release and update at
// once (run it with -race); at every check and at the end, free plus
// allocated nodes on each cluster equal its capacity: nothing lost or
// counted twice.
func TestLivePoolConcurrent(t *testing.T) {
	const clusters, capacity = 8, 16
	p := mustPool(t, Rules{})
	for _, c := range liveClusters(clusters, capacity) {
		if err := p.Register(c); err != nil {
			t.Fatal(err)
		}
	}
	check := func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		used := map[string]float64{}
		for _, a := range p.allocs {
			used[a.cluster] += a.nodes
		}
		for name, lc := range p.clusters {
			if got := lc.c.State["nodes_free"] + used[name]; got != capacity {
				t.Errorf("%s: free %v + allocated %v = %v, want %d", name, lc.c.State["nodes_free"], used[name], got, capacity)
			}
			if lc.c.State["nodes_free"] < 0 {
				t.Errorf("%s: free %v", name, lc.c.State["nodes_free"])
			}
		}
	}
	var wg sync.WaitGroup
	placed := make([]int, 8)
	for w := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			sel := Random{Rand: rand.New(rand.NewPCG(uint64(w), 2))}
			var mine []string
			for i := range 400 {
				name := fmt.Sprintf("w%d-j%d", w, i)
				a, err := p.Submit(&Job{Name: name, Nodes: 1 + rng.IntN(4)}, sel)
				if err != nil {
					t.Error(err)
					return
				}
				if len(a.Clusters) == 1 {
					mine = append(mine, name)
					placed[w]++
				}
				if len(mine) > 0 && rng.IntN(2) == 0 {
					k := rng.IntN(len(mine))
					if err := p.Release(mine[k]); err != nil {
						t.Error(err)
					}
					mine = append(mine[:k], mine[k+1:]...)
				}
				if i%50 == 0 {
					check()
				}
			}
			for _, name := range mine {
				if err := p.Release(name); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	check()
	total := 0
	for _, n := range placed {
		total += n
	}
	// How many of the 3,200 submissions find room depends on the
	// interleaving (813 to over 1,500 seen); the test is the invariant
	// above, so it only asks that the pool was used and left empty.
	t.Logf("%d of 3200 submissions placed", total)
	if total == 0 || len(p.allocations()) != 0 {
		t.Errorf("%d jobs placed, %d allocations left", total, len(p.allocations()))
	}
	for _, name := range p.clusterNames() {
		if st, _ := p.State(name); st["nodes_free"] != capacity {
			t.Errorf("%s: %v free at the end", name, st["nodes_free"])
		}
	}
}
