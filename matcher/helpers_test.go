package matcher

import (
	"bytes"
	"math/rand/v2"

	"github.com/crosscluster/crosscluster/internal/synth"
)

type bytesBuffer = bytes.Buffer

func synthVersionWorld(seed uint64, clusters, subsystems, jobs int) *VersionWorld {
	s := synth.RainbowVersions(rand.New(rand.NewPCG(seed, 0)), synth.RainbowVersionConfig{
		Clusters: clusters, Subsystems: subsystems, Jobs: jobs, DepsPerJob: 6})
	w := &VersionWorld{}
	for _, c := range s.Clusters {
		w.Clusters = append(w.Clusters, VersionCluster{Name: c.Name, Versions: c.Versions})
	}
	for _, j := range s.Jobs {
		vj := VersionJob{Name: j.Name, Package: j.Package, PackageVersion: j.PackageVersion}
		for _, r := range j.Ranges {
			vj.Ranges = append(vj.Ranges, DepRange{Subsystem: r.Subsystem, Min: r.Min, Max: r.Max})
		}
		w.Jobs = append(w.Jobs, vj)
	}
	return w
}

func synthBuildWorld(seed uint64, clusters, packages, jobs int) *BuildWorld {
	s := synth.RainbowBuilds(rand.New(rand.NewPCG(seed, 0)), synth.RainbowBuildConfig{
		Clusters: clusters, Packages: packages, Jobs: jobs})
	w := &BuildWorld{}
	for _, c := range s.Clusters {
		w.Clusters = append(w.Clusters, BuildCluster(c))
	}
	for _, j := range s.Jobs {
		w.Jobs = append(w.Jobs, BuildJob{Name: j.Name, Package: j.Package, Arch: j.Arch, Compiler: j.Compiler,
			CompilerVersion: j.CompilerVersion, MemMin: j.MemMin, MemMean: j.MemMean, MemMax: j.MemMax, Duration: j.Duration})
	}
	return w
}
