package experiment

import (
	"cmp"
	"slices"

	"github.com/crosscluster/crosscluster/matcher"
)

// Baseline says which memory stands for a package's fastest build, the
// point at which the "optimal" runtime is predicted.
type Baseline int

const (
	// FastestBuild: the memory of the single fastest build (the published
	// memory_global_best_runtime).
	FastestBuild Baseline = iota
	// FastestTenth: the mean memory of the fastest 10% of builds, sorted by
	// duration. The published memory_of_top_ten_percent_runtime took the
	// first 10% in file order instead (its sort was overwritten).
	FastestTenth
)

// FastestMemory returns, per package, the memory of its fastest build
// (FastestBuild; the first in input order on a tie) or the mean memory of its
// fastest 10% (FastestTenth; at least one build). samples is not modified.
func FastestMemory(samples []matcher.Sample, b Baseline) map[string]float64 {
	out := map[string]float64{}
	groups := map[string][]matcher.Sample{}
	for _, s := range samples {
		groups[s.Package] = append(groups[s.Package], s)
	}
	for pkg, g := range groups {
		g = slices.Clone(g)
		slices.SortStableFunc(g, func(a, b matcher.Sample) int { return cmp.Compare(a.Duration, b.Duration) })
		if b == FastestBuild {
			out[pkg] = g[0].Memory
			continue
		}
		n := max(1, len(g)/10)
		s := 0.0
		for _, x := range g[:n] {
			s += x.Memory
		}
		out[pkg] = s / float64(n)
	}
	return out
}
