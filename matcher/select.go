package matcher

import "math/rand/v2"

// Selector chooses among the clusters that matched a job. Candidates arrive
// sorted by name and must not be modified. Returning several clusters means
// "satisfy only": all of them are acceptable and none is consumed. Returning
// none means the job stays unassigned.
type Selector interface {
	Select(j *Job, candidates []*Cluster) ([]*Cluster, error)
}

// Random selects one candidate uniformly with Rand, rainbow's default.
// A nil Rand is a caller mistake and panics.
type Random struct{ Rand *rand.Rand }

func (s Random) Select(_ *Job, c []*Cluster) ([]*Cluster, error) {
	if s.Rand == nil {
		panic("matcher: Random selector needs a Rand")
	}
	if len(c) == 0 {
		return nil, nil
	}
	i := s.Rand.IntN(len(c))
	return c[i : i+1], nil
}

// First selects the first candidate by name.
type First struct{}

func (First) Select(_ *Job, c []*Cluster) ([]*Cluster, error) {
	if len(c) == 0 {
		return nil, nil
	}
	return c[:1], nil
}

// All returns every candidate (rainbow's satisfy-only mode).
type All struct{}

func (All) Select(_ *Job, c []*Cluster) ([]*Cluster, error) { return c, nil }
