package matcher

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// Pool is a set of clusters jobs are submitted to, with their state. It
// matches each job against every cluster in name order, hands the matches to
// a Selector and, when exactly one cluster is chosen and Replacement is
// false, consumes the job's nodes from that cluster's free-nodes state.
// A Pool is not safe for concurrent use.
type Pool struct {
	Rules Rules
	// Replacement true means capacity is never consumed ("with
	// replacement"); false consumes job.Nodes from the chosen cluster.
	Replacement bool

	clusters []*Cluster
	compiled []*ccluster
	subs     map[string]bool
}

// NewPool copies and sorts clusters by name (states are copied too, so
// consuming capacity never touches the caller's maps). An empty set returns
// ErrNoClusters; a duplicate name is an error.
func NewPool(clusters []Cluster, rules Rules) (*Pool, error) {
	if len(clusters) == 0 {
		return nil, ErrNoClusters
	}
	p := &Pool{Rules: rules, subs: map[string]bool{}}
	for i := range clusters {
		c := clusters[i]
		c.State = maps.Clone(c.State)
		if c.State == nil {
			c.State = map[string]float64{}
		}
		p.clusters = append(p.clusters, &c)
		for s := range c.Subsystems {
			p.subs[s] = true
		}
	}
	slices.SortFunc(p.clusters, func(a, b *Cluster) int { return cmp.Compare(a.Name, b.Name) })
	for i, c := range p.clusters {
		if i > 0 && p.clusters[i-1].Name == c.Name {
			return nil, fmt.Errorf("matcher: duplicate cluster name %q", c.Name)
		}
		p.compiled = append(p.compiled, compileCluster(c))
	}
	return p, nil
}

// Clusters returns the pool's clusters in name order. Their State reflects
// consumed capacity; callers must not modify them.
func (p *Pool) Clusters() []*Cluster { return p.clusters }

// Assignment is the outcome of one submission.
type Assignment struct {
	Job      string
	Clusters []string // chosen clusters; empty when unmatched; several for satisfy-only
	Matched  []string // every cluster that matched, in name order
	Results  []Result // one per cluster in name order
}

// Submit matches j against every cluster and selects among the matches.
// A requirement naming a subsystem that no cluster in the pool registers
// returns an error wrapping ErrUnknownSubsystem; everything else that fails
// to match is reported in Results, not as an error.
func (p *Pool) Submit(j *Job, s Selector) (Assignment, error) {
	a := Assignment{Job: j.Name}
	for _, r := range j.Requires {
		if !p.subs[r.Subsystem] {
			return a, fmt.Errorf("%w: job %s requires %q", ErrUnknownSubsystem, j.Name, r.Subsystem)
		}
	}
	reqs := compileReqs(j.Requires)
	var cands []*Cluster
	a.Results = make([]Result, len(p.clusters))
	for i, cc := range p.compiled {
		a.Results[i] = p.Rules.matchCompiled(j, reqs, cc)
		if a.Results[i].OK() {
			cands = append(cands, p.clusters[i])
			a.Matched = append(a.Matched, cc.name)
		}
	}
	if len(cands) == 0 {
		return a, nil
	}
	chosen, err := s.Select(j, cands)
	if err != nil {
		return a, err
	}
	for _, c := range chosen {
		a.Clusters = append(a.Clusters, c.Name)
	}
	if len(chosen) == 1 && !p.Replacement {
		key := p.Rules.freeKey()
		if free, ok := chosen[0].State[key]; ok {
			chosen[0].State[key] = max(0, free-float64(max(j.Nodes, 1)))
		}
	}
	return a, nil
}

// Satisfying appends to dst the indices, in the order of Clusters, of the
// clusters whose subsystems meet r under the pool's Rules, and returns the
// extended slice. Node and core counts and free capacity are not checked,
// and no reason is built: it is the bulk check of a simulation that asks
// the same requirement of every cluster many times.
func (p *Pool) Satisfying(dst []int, r Requirement) []int {
	q := compileReqs([]Requirement{r})[0]
	for i, cc := range p.compiled {
		if q.satisfied(cc, p.Rules.Bounds) {
			dst = append(dst, i)
		}
	}
	return dst
}
