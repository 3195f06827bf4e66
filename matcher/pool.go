package matcher

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
)

// Errors of Pool.
var (
	// ErrClusterExists: a cluster of that name is registered already.
	ErrClusterExists = errors.New("matcher: cluster already registered")
	// ErrJobExists: a job of that name holds an allocation already.
	ErrJobExists = errors.New("matcher: job already allocated")
	// ErrNoAllocation: the job holds no allocation.
	ErrNoAllocation = errors.New("matcher: job holds no allocation")
	// ErrSelector: a selector returned a cluster it was not offered (a
	// copy, an unregistered cluster, nil, or one cluster twice).
	ErrSelector = errors.New("matcher: selector returned a cluster it was not offered")
	// ErrState: a cluster state that cannot be true: a NaN or infinite
	// value, or free nodes below zero, above the cluster's total, or above
	// what the pool's own allocations leave.
	ErrState = errors.New("matcher: impossible cluster state")
)

// Pool is the set of clusters a scheduler service keeps: clusters are
// registered, their state updated and removed while jobs are matched; a
// job placed on one cluster holds its nodes until Release, which gives them
// back. Every method is safe for concurrent use; each takes effect
// atomically (a Submit matches, selects and allocates against one state).
//
// Capacity is the state key "nodes_free", as in rainbow: Submit takes
// max(job.Nodes, 1) from the chosen cluster, Release returns it. A cluster
// without the key is never short of nodes and keeps no count. A simulation
// that places jobs "with replacement" releases each job after its Submit.
type Pool struct {
	rules Rules

	mu       sync.Mutex
	clusters map[string]*liveCluster
	names    []string // sorted; nil after a change until needed
	allocs   map[string]allocation
}

type liveCluster struct {
	c  *Cluster
	cc *ccluster
}

type allocation struct {
	cluster string
	nodes   float64
}

// Assignment is the outcome of one submission.
type Assignment struct {
	Clusters []string // chosen clusters in name order; empty when unmatched; several for satisfy-only
	Results  []Result // one per registered cluster in name order
}

// NewPool returns a pool matching with rules that holds the given clusters
// (copied, states included, so that allocations never touch the caller's
// maps). A name given twice is an error wrapping ErrClusterExists.
func NewPool(clusters []Cluster, rules Rules) (*Pool, error) {
	p := &Pool{rules: rules, clusters: map[string]*liveCluster{}, allocs: map[string]allocation{}}
	for _, c := range clusters {
		if err := p.Register(c); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Register adds a cluster (copied, state included). A name in use is an
// error wrapping ErrClusterExists; a state that cannot be true (see
// UpdateState), one wrapping ErrState.
func (p *Pool) Register(c Cluster) error {
	c.State = maps.Clone(c.State)
	if c.State == nil {
		c.State = map[string]float64{}
	}
	if err := checkState(&c, c.State, 0); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.clusters[c.Name]; ok {
		return fmt.Errorf("%w: %q", ErrClusterExists, c.Name)
	}
	p.clusters[c.Name] = &liveCluster{c: &c, cc: compileCluster(&c)}
	p.names = nil
	return nil
}

// Remove takes a cluster out of the pool and returns the names of the jobs
// that held nodes on it (their allocations end with it), sorted.
func (p *Pool) Remove(name string) ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.clusters[name]; !ok {
		return nil, fmt.Errorf("%w: %q", ErrNoClusters, name)
	}
	delete(p.clusters, name)
	p.names = nil
	var lost []string
	for job, a := range p.allocs {
		if a.cluster == name {
			lost = append(lost, job)
			delete(p.allocs, job)
		}
	}
	slices.Sort(lost)
	return lost, nil
}

// UpdateState sets the given state keys of a cluster (other keys keep
// their values), as a cluster reports its state to rainbow. Setting the
// free-nodes key replaces the count Submit and Release keep. An update
// that cannot be true is refused whole, wrapping ErrState: a NaN or
// infinite value, free nodes below zero or above the cluster's Nodes, or
// above what the jobs this pool placed there leave free (a stale report
// that would over-commit the cluster).
func (p *Pool) UpdateState(name string, state map[string]float64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	lc, ok := p.clusters[name]
	if !ok {
		return fmt.Errorf("%w: %q", ErrNoClusters, name)
	}
	held := 0.0
	for _, a := range p.allocs {
		if a.cluster == name {
			held += a.nodes
		}
	}
	if err := checkState(lc.c, state, held); err != nil {
		return err
	}
	maps.Copy(lc.c.State, state)
	return nil
}

// checkState refuses a state that cannot be true of c while the pool's
// jobs hold held of its nodes.
func checkState(c *Cluster, state map[string]float64, held float64) error {
	for _, k := range slices.Sorted(maps.Keys(state)) {
		if v := state[k]; math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: cluster %s: %s is %g", ErrState, c.Name, k, v)
		}
	}
	free, ok := state[freeKey]
	switch {
	case !ok:
	case free < 0:
		return fmt.Errorf("%w: cluster %s: %s is %g, below zero", ErrState, c.Name, freeKey, free)
	case c.Nodes > 0 && free > float64(c.Nodes):
		return fmt.Errorf("%w: cluster %s: %s is %g, above its %d nodes", ErrState, c.Name, freeKey, free, c.Nodes)
	case c.Nodes > 0 && free > float64(c.Nodes)-held:
		return fmt.Errorf("%w: cluster %s: %s is %g, but jobs of this pool hold %g of its %d nodes (a stale report?)",
			ErrState, c.Name, freeKey, free, held, c.Nodes)
	}
	return nil
}

// State returns a copy of a cluster's state.
func (p *Pool) State(name string) (map[string]float64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	lc, ok := p.clusters[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNoClusters, name)
	}
	return maps.Clone(lc.c.State), nil
}

// sorted returns the registered names in order; p.mu is held.
func (p *Pool) sorted() []string {
	if p.names == nil {
		p.names = slices.Sorted(maps.Keys(p.clusters))
	}
	return p.names
}

// Submit matches j against every cluster's current state in name order,
// hands the matches to s and, when s chooses exactly one cluster,
// allocates the job's nodes there until Release(j.Name). A job name that
// holds an allocation already is an error wrapping ErrJobExists; a
// requirement on a subsystem no registered cluster has wraps
// ErrUnknownSubsystem. Several chosen clusters (satisfy-only selection)
// allocate nothing. Everything else that fails to match is reported in
// Results, not as an error.
func (p *Pool) Submit(j *Job, s Selector) (Assignment, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var a Assignment
	if _, ok := p.allocs[j.Name]; ok {
		return a, fmt.Errorf("%w: %q", ErrJobExists, j.Name)
	}
	if j.Nodes < 0 || j.Cores < 0 {
		return a, fmt.Errorf("%w: job %s asks for %d nodes and %d cores", ErrSchema, j.Name, j.Nodes, j.Cores)
	}
	names := p.sorted()
	for _, r := range j.Requires {
		if p.rules.Rainbow {
			break // rainbow does not refuse a job for an unknown subsystem
		}
		found := false
		for _, n := range names {
			// The compiled cluster holds only what the default rules use:
			// neither a cluster nor a subsystem read with an error.
			if cc := p.clusters[n].cc; !cc.unread && cc.subs[r.Subsystem] != nil {
				found = true
				break
			}
		}
		if !found {
			return a, fmt.Errorf("%w: job %s requires %q", ErrUnknownSubsystem, j.Name, r.Subsystem)
		}
	}
	reqs := compileReqs(j.Requires)
	var cands []*Cluster
	a.Results = make([]Result, len(names))
	for i, n := range names {
		lc := p.clusters[n]
		if p.rules.Rainbow {
			// rainbow's match, then its selection step's capacity filter.
			a.Results[i] = p.rules.Match(j, lc.c)
			if free, ok := lc.c.State[freeKey]; ok && a.Results[i].ok() && free < float64(max(j.Nodes, 1)) {
				a.Results[i].Verdict = NotNow
				a.Results[i].Reasons = []Reason{{-1, NoFreeNodes, fmt.Sprintf("%s is %g, job needs %d", freeKey, free, max(j.Nodes, 1))}}
			}
		} else {
			a.Results[i] = p.rules.matchCompiled(j, reqs, lc.cc)
		}
		if a.Results[i].ok() {
			cands = append(cands, lc.c)
		}
	}
	if len(cands) == 0 {
		return a, nil
	}
	chosen, err := s.Select(j, cands)
	if err != nil {
		return a, err
	}
	// A selector's answer must be clusters it was offered, each once: a
	// copy or a stranger would have its state changed instead of the
	// registered cluster's.
	offered := make(map[*Cluster]bool, len(cands))
	for _, c := range cands {
		offered[c] = true
	}
	for _, c := range chosen {
		if c == nil || !offered[c] {
			name := "nil"
			if c != nil {
				name = fmt.Sprintf("%q", c.Name)
			}
			return a, fmt.Errorf("%w: job %s: cluster %s", ErrSelector, j.Name, name)
		}
		delete(offered, c) // a second time is not offered
	}
	chosen = slices.Clone(chosen)
	slices.SortFunc(chosen, func(x, y *Cluster) int { return cmp.Compare(x.Name, y.Name) })
	for _, c := range chosen {
		a.Clusters = append(a.Clusters, c.Name)
	}
	if len(chosen) == 1 {
		need := float64(max(j.Nodes, 1))
		al := allocation{cluster: chosen[0].Name}
		if free, ok := chosen[0].State[freeKey]; ok {
			chosen[0].State[freeKey] = free - need
			al.nodes = need
		}
		p.allocs[j.Name] = al
	}
	return a, nil
}

// Release ends a job's allocation, giving its nodes back to its cluster.
// A job without one is an error wrapping ErrNoAllocation.
func (p *Pool) Release(job string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	al, ok := p.allocs[job]
	if !ok {
		return fmt.Errorf("%w: %q", ErrNoAllocation, job)
	}
	delete(p.allocs, job)
	if lc, ok := p.clusters[al.cluster]; ok && al.nodes > 0 {
		free := lc.c.State[freeKey] + al.nodes
		if lc.c.Nodes > 0 {
			free = min(free, float64(lc.c.Nodes))
		}
		lc.c.State[freeKey] = free
	}
	return nil
}

// Satisfying appends to dst the indices, in name order of the registered
// clusters, of the clusters whose subsystems meet r under the pool's Rules,
// and returns the extended slice. Node and core counts and free capacity
// are not checked, and no reason is built: it is the bulk check of a
// simulation that asks the same requirement of every cluster many times.
// A lone requirement has no meaning in rainbow's search, so with
// Rules.Rainbow it is checked as the default rules check it.
func (p *Pool) Satisfying(dst []int, r Requirement) []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	q := compileReqs([]Requirement{r})[0]
	for i, n := range p.sorted() {
		if cc := p.clusters[n].cc; (!cc.unread || p.rules.Rainbow) && q.satisfied(cc, p.rules.Exclusive) {
			dst = append(dst, i)
		}
	}
	return dst
}
