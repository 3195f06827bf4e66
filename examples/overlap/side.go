package main

import (
	"fmt"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/crosscluster/crosscluster/overlap"
	"github.com/crosscluster/crosscluster/regime"
)

// side is one cluster of the comparison, reduced job by job, as its table
// is read, to what the comparison needs: the regime counts, the compared
// jobs' label bases, references and candidate feature values, and a
// FeatureProfile for screening. The jobs themselves are not held (but for
// -transfer, whose model reads them), so that a table of 10^6 rows costs
// about 100 bytes per compared job.
type side struct {
	name, role string
	rules      regime.Rules
	want       regime.Label // "" compares every regime
	candidates []string
	keepJobs   bool

	total       int
	counts      map[regime.Label]int
	auth, proxy int
	withGPU     int      // jobs of the table with a GPU sample
	withMem     int      // jobs of the table with a memory sample
	clusters    []string // the clusters the table's jobs belong to, first seen first
	refs        []jobRef
	cols        [][]float64 // per candidate, the compared jobs' values
	profile     *regime.FeatureProfile
	jobs        []regime.Job // the compared jobs, with keepJobs
	err         error        // the first job whose features could not be read
}

func newSide(name, role string, rules regime.Rules, want regime.Label, candidates []string, keepJobs bool) *side {
	return &side{name: name, role: role, rules: rules, want: want, candidates: candidates, keepJobs: keepJobs,
		counts: make(map[regime.Label]int), cols: make([][]float64, len(candidates)), profile: regime.NewFeatureProfile(candidates)}
}

// add labels a job, counts it and, when it is of the compared regime,
// takes what the comparison needs of it. It reports whether the job itself
// must be kept (for -transfer); it fits regime.ReadConfig.Keep.
func (s *side) add(j *regime.Job) bool {
	s.total++
	if !slices.Contains(s.clusters, j.Cluster) && len(s.clusters) < 10 {
		s.clusters = append(s.clusters, j.Cluster)
	}
	if g, _ := j.Feature("value_gpu_cnt"); g > 0 {
		s.withGPU++
	}
	if m, _ := j.Feature("value_memused_cnt"); m > 0 {
		s.withMem++
	}
	j.Regime, j.Basis = s.rules.Label(j)
	s.counts[j.Regime]++
	if s.want != "" && j.Regime != s.want {
		return false
	}
	switch j.Basis {
	case regime.Authoritative:
		s.auth++
	case regime.Proxy:
		s.proxy++
	}
	s.refs = append(s.refs, jobRef{j.ID, j.Cluster, s.role, j.Regime})
	for k, f := range s.candidates {
		v, ok := j.Feature(f)
		if !ok && s.err == nil {
			s.err = fmt.Errorf("%s job %s (cluster %q): %w %q", s.name, j.ID, j.Cluster, regime.ErrUnknownFeature, f)
		}
		s.cols[k] = append(s.cols[k], v)
	}
	s.profile.Add(j)
	return s.keepJobs
}

// n is the number of compared jobs.
func (s *side) n() int { return len(s.refs) }

// labelLine is the console line of the side's regime counts.
func (s *side) labelLine() string {
	var parts []string
	for _, l := range regime.Labels() {
		parts = append(parts, fmt.Sprintf("%s=%d", l, s.counts[l]))
	}
	return fmt.Sprintf("  %-10s %6d jobs: %s", s.name, s.total, strings.Join(parts, " "))
}

// stack returns the features' matrix of the source's compared jobs
// followed by the target's, and the domain labels.
func stack(src, tgt *side, features []string) (*mat.Dense, []int) {
	n := src.n() + tgt.n()
	if n == 0 || len(features) == 0 {
		return &mat.Dense{}, nil // Fit reports the missing data
	}
	y := make([]int, n)
	for i := src.n(); i < n; i++ {
		y[i] = overlap.Target
	}
	x := mat.NewDense(n, len(features), nil)
	for k, f := range features {
		c := indexOf(src.candidates, f)
		for i, v := range src.cols[c] {
			x.Set(i, k, v)
		}
		for i, v := range tgt.cols[c] {
			x.Set(src.n()+i, k, v)
		}
	}
	return x, y
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	panic("overlap example: feature " + name + " is not a candidate")
}

// noTelemetry returns a warning when a cluster's compared jobs were
// labelled by the proxy rule although no job of its table has a GPU sample,
// or a memory sample (a table without value_gpu or value_memused, as the
// Stampede accounting files): the rule reads missing GPU telemetry as a
// CPU-only node and missing memory telemetry as standard memory, so it
// could tell no GPU (large-memory) job apart there and those labels rest on
// absent data.
func noTelemetry(sides ...*side) string {
	var parts []string
	for _, s := range sides {
		var none []string
		if s.withGPU == 0 {
			none = append(none, "value_gpu")
		}
		if s.withMem == 0 {
			none = append(none, "value_memused")
		}
		if s.proxy > 0 && len(none) > 0 {
			parts = append(parts, fmt.Sprintf("%s has no %s sample (%d proxy-labelled jobs compared)", s.name, strings.Join(none, " or "), s.proxy))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "telemetry the proxy rule reads is absent: " + strings.Join(parts, "; ") +
		". The rule reads missing GPU telemetry as a CPU-only node and missing memory telemetry as standard memory, so there it could tell no GPU or large-memory job apart and those labels rest on absent data (-strict labels such jobs unknown)"
}

// mixedClusters returns a warning when one side's table holds the jobs of
// several clusters (its cluster column names more than one): they are
// compared as one cluster.
func mixedClusters(sides ...*side) string {
	var parts []string
	for _, s := range sides {
		if len(s.clusters) > 1 {
			more := ""
			if len(s.clusters) == 10 {
				more = ", ..."
			}
			parts = append(parts, fmt.Sprintf("the %s table %s holds jobs of %d clusters (%s%s)", s.role, s.name, len(s.clusters), strings.Join(s.clusters, ", "), more))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + ": they are compared as one cluster, so differences between them are mixed into the comparison"
}
