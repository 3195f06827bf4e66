package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// RainbowVersionConfig sizes a synthetic version-range (reliabuild) world.
// Zero fields take the published experiment's sizes: 100 clusters, 219
// dependency subsystems, 1,602 jobs with about 27 dependencies each.
type RainbowVersionConfig struct {
	Clusters   int
	Subsystems int
	Jobs       int
	DepsPerJob int // mean number of dependencies per job
}

// RainbowVersionCluster is a cluster with one exact version per subsystem.
type RainbowVersionCluster struct {
	Name     string
	Versions map[string]string
}

// RainbowRange is a job's acceptable range for one dependency.
type RainbowRange struct{ Subsystem, Min, Max string }

// RainbowVersionJob is a build with a version range per dependency, sorted
// by subsystem.
type RainbowVersionJob struct {
	Name, Package, PackageVersion string
	Ranges                        []RainbowRange
}

// RainbowVersionWorld is a generated version-range experiment.
type RainbowVersionWorld struct {
	Clusters []RainbowVersionCluster
	Jobs     []RainbowVersionJob
}

type semver struct{ major, minor, patch int }

func (v semver) String() string { return fmt.Sprintf("%d.%d.%d", v.major, v.minor, v.patch) }

func (v semver) nextPatch() semver { return semver{v.major, v.minor, v.patch + 1} }

func (v semver) less(w semver) bool {
	if v.major != w.major {
		return v.major < w.major
	}
	if v.minor != w.minor {
		return v.minor < w.minor
	}
	return v.patch < w.patch
}

// RainbowVersions generates a version-range world the way the published
// generator (rainbow-experiments simulation-reliabuild/data/extract.py)
// built its data: every subsystem has a sorted list of observed versions
// split into four buckets (a single observed version gets one range,
// [0.0.0, next major]), [0.0.0, smallest+1 patch], [smallest+2 patches,
// middle+1 patch], [middle+2 patches, highest] and [highest+1 patch,
// highest+11 patches]; a cluster gets one observed version per subsystem,
// drawn without replacement and refilled when exhausted; a job's range for a
// dependency is the bucket holding the version it was built with. r must not
// be nil.
func RainbowVersions(r *rand.Rand, cfg RainbowVersionConfig) RainbowVersionWorld {
	if r == nil {
		panic("synth: RainbowVersions needs a generator")
	}
	nc, ns, nj, deps := cfg.Clusters, cfg.Subsystems, cfg.Jobs, cfg.DepsPerJob
	if nc <= 0 {
		nc = 100
	}
	if ns <= 0 {
		ns = 219
	}
	if nj <= 0 {
		nj = 1602
	}
	if deps <= 0 {
		deps = 27
	}
	deps = min(deps, ns)
	subs := make([]string, ns)
	observed := make([][]semver, ns)
	buckets := make([][4][2]semver, ns)
	for s := range subs {
		subs[s] = fmt.Sprintf("pkg%03d", s)
		// About half the published subsystems had a single observed version,
		// whose one range [0.0.0, next major] every cluster meets.
		n := 1
		if r.IntN(2) == 0 {
			n = 2 + r.IntN(11)
		}
		v := semver{r.IntN(4), r.IntN(10), r.IntN(5)}
		for i := 0; i < n; i++ {
			observed[s] = append(observed[s], v)
			switch r.IntN(3) {
			case 0:
				v = semver{v.major + 1, 0, r.IntN(3)}
			case 1:
				v = semver{v.major, v.minor + 1 + r.IntN(2), 0}
			default:
				v = semver{v.major, v.minor, v.patch + 1 + r.IntN(3)}
			}
		}
		o := observed[s]
		if len(o) == 1 {
			next := semver{o[0].major + 1, 0, 0}
			buckets[s] = [4][2]semver{{{0, 0, 0}, next}, {next, next}, {next, next}, {next, next}}
			continue
		}
		smallest := o[0].nextPatch()
		middle := o[len(o)/2].nextPatch()
		highest := o[len(o)-1]
		top := highest
		for i := 0; i < 11; i++ {
			top = top.nextPatch()
		}
		buckets[s] = [4][2]semver{
			{{0, 0, 0}, smallest},
			{smallest.nextPatch(), middle},
			{middle.nextPatch(), highest},
			{highest.nextPatch(), top},
		}
	}
	bucketOf := func(s int, v semver) RainbowRange {
		for _, b := range buckets[s] {
			if !v.less(b[0]) && !b[1].less(v) {
				return RainbowRange{subs[s], b[0].String(), b[1].String()}
			}
		}
		b := buckets[s][0]
		return RainbowRange{subs[s], b[0].String(), b[1].String()}
	}
	w := RainbowVersionWorld{}
	pool := make([][]semver, ns)
	for c := 0; c < nc; c++ {
		cl := RainbowVersionCluster{Name: fmt.Sprintf("cluster%04d", c), Versions: make(map[string]string, ns)}
		for s := range subs {
			if len(pool[s]) == 0 {
				pool[s] = slices.Clone(observed[s])
				r.Shuffle(len(pool[s]), func(i, j int) { pool[s][i], pool[s][j] = pool[s][j], pool[s][i] })
			}
			cl.Versions[subs[s]] = pool[s][0].String()
			pool[s] = pool[s][1:]
		}
		w.Clusters = append(w.Clusters, cl)
	}
	for j := 0; j < nj; j++ {
		pkg := r.IntN(ns)
		k := max(1, min(ns, deps/2+r.IntN(deps+1)))
		picked := r.Perm(ns)[:k]
		if !slices.Contains(picked, pkg) {
			picked[0] = pkg
		}
		slices.Sort(picked)
		job := RainbowVersionJob{Name: fmt.Sprintf("job%06d-%08x", j, r.Uint32()), Package: subs[pkg]}
		for _, s := range picked {
			v := observed[s][r.IntN(len(observed[s]))]
			if s == pkg {
				job.PackageVersion = v.String()
			}
			job.Ranges = append(job.Ranges, bucketOf(s, v))
		}
		w.Jobs = append(w.Jobs, job)
	}
	return w
}

// RainbowBuildConfig sizes a synthetic spack-build world. Zero fields take
// the published sizes: 100 clusters, 171 packages, 31,622 builds.
type RainbowBuildConfig struct {
	Clusters int
	Packages int
	Jobs     int
}

// RainbowBuildCluster is a cluster of the spack-build experiment.
type RainbowBuildCluster struct {
	Name                            string
	Memory, CostPerNodeHour         float64
	Arch, Compiler, CompilerVersion string
}

// RainbowBuildJob is one successful build.
type RainbowBuildJob struct {
	Name, Package                   string
	Arch, Compiler, CompilerVersion string
	MemMin, MemMean, MemMax         float64
	Duration                        float64
}

// RainbowBuildWorld is a generated spack-build experiment.
type RainbowBuildWorld struct {
	Clusters []RainbowBuildCluster
	Jobs     []RainbowBuildJob
}

// rainbowPools returns the published generator's feature pools
// (rainbow-experiments simulation-spack-build/data/unique-features.json),
// built per call so that the package holds no mutable globals.
func rainbowPools() (arches, compilers []string, versions map[string][]string) {
	arches = []string{"linux-ubuntu22.04-x86_64_v3", "linux-ubuntu20.04-x86_64_v3",
		"linux-ubuntu18.04-x86_64_v3", "linux-ubuntu20.04-neoverse_v1", "linux-amzn2-neoverse_n1",
		"linux-amzn2-aarch64", "linux-amzn2-x86_64_v3", "linux-ubuntu22.04-neoverse_v1"}
	compilers = []string{"gcc", "oneapi"}
	versions = map[string][]string{
		"gcc":    {"11.4.0", "11.1.0", "7.5.0", "7.3.1", "12.3.0", "11.3.0"},
		"oneapi": {"2024.0.0", "2023.2.0"},
	}
	return arches, compilers, versions
}

const (
	rainbowMinMemory = 331776.0
	rainbowMaxMemory = 48264462336.0
)

// RainbowBuilds generates a spack-build world as the published generator
// did for clusters (memory uniform between the smallest and largest build
// memory, cost per node hour 0.8, 1.6, 3.2 or 4.2 by memory band, random
// arch, compiler and compiler version from the published pools) and builds
// per package whose duration grows linearly with mean memory plus noise.
// r must not be nil.
func RainbowBuilds(r *rand.Rand, cfg RainbowBuildConfig) RainbowBuildWorld {
	if r == nil {
		panic("synth: RainbowBuilds needs a generator")
	}
	nc, np, nj := cfg.Clusters, cfg.Packages, cfg.Jobs
	if nc <= 0 {
		nc = 100
	}
	if np <= 0 {
		np = 171
	}
	if nj <= 0 {
		nj = 31622
	}
	rainbowArches, rainbowCompilers, rainbowVersions := rainbowPools()
	var w RainbowBuildWorld
	// The published cost bands: below a quarter of the largest memory,
	// below half the span, below three quarters, and above.
	middle := (rainbowMaxMemory - rainbowMinMemory) / 2
	for c := 0; c < nc; c++ {
		mem := math.Floor(rainbowMinMemory + r.Float64()*(rainbowMaxMemory-rainbowMinMemory))
		cost := 4.2
		switch {
		case mem < 0.25*rainbowMaxMemory:
			cost = 0.8
		case mem < middle:
			cost = 1.6
		case mem < 0.75*rainbowMaxMemory:
			cost = 3.2
		}
		comp := rainbowCompilers[r.IntN(len(rainbowCompilers))]
		vs := rainbowVersions[comp]
		w.Clusters = append(w.Clusters, RainbowBuildCluster{Name: fmt.Sprintf("cluster%04d", c), Memory: mem,
			CostPerNodeHour: cost, Arch: rainbowArches[r.IntN(len(rainbowArches))], Compiler: comp,
			CompilerVersion: vs[r.IntN(len(vs))]})
	}
	type pkg struct {
		name                string
		logMem, base, perGB float64
	}
	pkgs := make([]pkg, np)
	for i := range pkgs {
		pkgs[i] = pkg{name: fmt.Sprintf("pkg%03d", i), logMem: math.Log(2e8) + r.Float64()*math.Log(40),
			base: 60 + r.Float64()*1200, perGB: 20 + r.Float64()*400}
	}
	for j := 0; j < nj; j++ {
		p := &pkgs[r.IntN(np)]
		mean := math.Exp(p.logMem + 0.5*r.NormFloat64())
		maxMem := mean * (1.2 + 2*r.Float64())
		minMem := mean * (0.02 + 0.2*r.Float64())
		dur := max(5, p.base+p.perGB*mean/1e9+0.15*p.base*r.NormFloat64())
		comp := rainbowCompilers[r.IntN(len(rainbowCompilers))]
		vs := rainbowVersions[comp]
		w.Jobs = append(w.Jobs, RainbowBuildJob{Name: fmt.Sprintf("%d", 100000+j), Package: p.name,
			Arch: rainbowArches[r.IntN(len(rainbowArches))], Compiler: comp, CompilerVersion: vs[r.IntN(len(vs))],
			MemMin: math.Floor(minMem), MemMean: mean, MemMax: math.Floor(maxMem), Duration: dur})
	}
	return w
}
