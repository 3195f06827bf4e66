package experiment

import (
	"cmp"
	"slices"
)

// baselineKind says which memory stands for a package's fastest build, the
// point at which the "optimal" runtime is predicted.
type baselineKind int

const (
	// fastestBuild: the memory of the single fastest build (the published
	// memory_global_best_runtime).
	fastestBuild baselineKind = iota
	// fastestTenth: the mean memory of the fastest 10% of builds, sorted by
	// duration. The published memory_of_top_ten_percent_runtime took the
	// first 10% in file order instead (its sort was overwritten).
	fastestTenth
)

// fastestMemory returns, per package, the memory of its fastest build
// (FastestBuild; the first in input order on a tie) or the mean memory of its
// fastest 10% (FastestTenth; at least one build). samples is not modified.
func fastestMemory(samples []sample, b baselineKind) map[string]float64 {
	out := map[string]float64{}
	groups := map[string][]sample{}
	for _, s := range samples {
		groups[s.Package] = append(groups[s.Package], s)
	}
	for pkg, g := range groups {
		g = slices.Clone(g)
		slices.SortStableFunc(g, func(a, b sample) int { return cmp.Compare(a.Duration, b.Duration) })
		if b == fastestBuild {
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
