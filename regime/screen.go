package regime

import (
	"fmt"
	"math"
	"strings"
)

// screen picks the procedure's feature set: of the candidates (nil means
// JobFeatures: ncores, nhosts, timelimit_sec, runtime_sec, queue_time_sec,
// runtime_fraction), those with no missing value in any cluster (as
// safeFeatures), not forbidden, not constant over all clusters and not a
// copy of an earlier kept feature. Every candidate left out is listed with
// its reason; the missing shares are given per cluster, named by names
// (nil or short: "cluster 1", "cluster 2", ...). It is ScreenProfiles of
// each cluster's FeatureProfile.
func screen(candidates, names []string, clusters ...[]Job) Screened {
	ps := make([]*FeatureProfile, len(clusters))
	for c, js := range clusters {
		ps[c] = NewFeatureProfile(candidates)
		for i := range js {
			ps[c].Add(&js[i])
		}
	}
	return ScreenProfiles(candidates, names, ps...)
}

// FeatureProfile is what Screen needs to know of one cluster's candidate
// features, gathered job by job, so that clusters can be screened without
// holding their jobs: per candidate, how many jobs lack it, whether it is
// constant and which earlier candidates it equals for every job.
type FeatureProfile struct {
	candidates []string
	n          int
	missing    []int
	undefined  []bool    // some job does not have the feature at all
	first      []float64 // the first job's value
	constant   []bool    // every value equals first
	same       [][]bool  // same[f][g], g < f: equal values for every job
	row        []float64
}

// NewFeatureProfile returns an empty profile of the candidates (nil means
// JobFeatures).
func NewFeatureProfile(candidates []string) *FeatureProfile {
	if candidates == nil {
		candidates = JobFeatures()
	}
	k := len(candidates)
	p := &FeatureProfile{candidates: candidates, missing: make([]int, k), undefined: make([]bool, k),
		first: make([]float64, k), constant: make([]bool, k), same: make([][]bool, k), row: make([]float64, k)}
	for f := range k {
		p.constant[f] = true
		p.same[f] = make([]bool, f)
		for g := range f {
			p.same[f][g] = true
		}
	}
	return p
}

// Add counts one job of the cluster.
func (p *FeatureProfile) Add(j *Job) {
	for f, name := range p.candidates {
		v, ok := j.Feature(name)
		if !ok {
			p.undefined[f] = true
		}
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			p.missing[f]++
		}
		if p.n == 0 {
			p.first[f] = v
		} else if v != p.first[f] {
			p.constant[f] = false
		}
		p.row[f] = v
		for g := range f {
			if p.row[g] != v {
				p.same[f][g] = false
			}
		}
	}
	p.n++
}

// ScreenProfiles is Screen from the clusters' profiles, which must have
// been made with the same candidates (nil means JobFeatures); a profile of
// other candidates panics.
func ScreenProfiles(candidates, names []string, profiles ...*FeatureProfile) Screened {
	if candidates == nil {
		candidates = JobFeatures()
	}
	for _, p := range profiles {
		if len(p.candidates) != len(candidates) {
			panic("regime: ScreenProfiles: a profile of other candidates")
		}
		for f := range candidates {
			if p.candidates[f] != candidates[f] {
				panic("regime: ScreenProfiles: a profile of other candidates")
			}
		}
	}
	var out Screened
	var kept []int // candidate indices of out.Features
next:
	for f, name := range candidates {
		if isForbidden(name) {
			out.Dropped = append(out.Dropped, Dropped{name, "forbidden by the procedure (the proxy regime rule reads it)"})
			continue
		}
		var shares []string
		anyMissing, unknown := false, false
		for c, p := range profiles {
			cn := fmt.Sprintf("cluster %d", c+1)
			if c < len(names) {
				cn = names[c]
			}
			unknown = unknown || p.undefined[f]
			if p.n == 0 {
				shares = append(shares, cn+" has no jobs")
				anyMissing = true
				continue
			}
			miss := p.missing[f]
			anyMissing = anyMissing || miss > 0
			shares = append(shares, fmt.Sprintf("%.1f%% of %s's jobs (%d of %d)", 100*float64(miss)/float64(p.n), cn, miss, p.n))
		}
		if unknown && anyMissing {
			out.Dropped = append(out.Dropped, Dropped{name, "not a column of every table (missing in " + strings.Join(shares, ", ") + ")"})
			continue
		}
		if anyMissing {
			out.Dropped = append(out.Dropped, Dropped{name, "missing in " + strings.Join(shares, ", ")})
			continue
		}
		if constantAll(profiles, f) {
			out.Dropped = append(out.Dropped, Dropped{name, fmt.Sprintf("constant (%g) in every cluster: zero variance", profiles[0].first[f])})
			continue
		}
		for k, g := range kept {
			if sameAll(profiles, f, g) {
				out.Dropped = append(out.Dropped, Dropped{name, "the same values as " + out.Features[k] + " for every job"})
				continue next
			}
		}
		out.Features = append(out.Features, name)
		kept = append(kept, f)
	}
	return out
}

// constantAll reports whether candidate f has one value over every job of
// the (non-empty) clusters.
func constantAll(ps []*FeatureProfile, f int) bool {
	if len(ps) == 0 {
		return false
	}
	for _, p := range ps {
		if !p.constant[f] || p.first[f] != ps[0].first[f] {
			return false
		}
	}
	return true
}

// sameAll reports whether candidates f and g (g < f) are equal for every
// job of every cluster.
func sameAll(ps []*FeatureProfile, f, g int) bool {
	for _, p := range ps {
		if !p.same[f][g] {
			return false
		}
	}
	return true
}
