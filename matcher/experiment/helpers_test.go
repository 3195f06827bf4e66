package experiment

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/crosscluster/crosscluster/internal/pubdata"
	"github.com/crosscluster/crosscluster/internal/synth"
	"github.com/crosscluster/crosscluster/matcher"
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
		vj := VersionJob{Name: j.Name, Package: j.Package}
		for _, r := range j.Ranges {
			vj.Ranges = append(vj.Ranges, matcher.Requirement{Subsystem: r.Subsystem, Field: "version", Op: matcher.InRange, Min: r.Min, Max: r.Max})
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
		w.Jobs = append(w.Jobs, matcher.BuildJob{Name: j.Name, Package: j.Package, Arch: j.Arch, Compiler: j.Compiler,
			CompilerVersion: j.CompilerVersion, MemMin: j.MemMin, MemMean: j.MemMean, MemMax: j.MemMax, Duration: j.Duration})
	}
	return w
}

// dataDir is the public rainbow data's directory ("" when it is absent;
// tests that read it call needData first, which skips them then).
var dataDir = func() string {
	d, _ := pubdata.Dir("rainbow")
	return d
}()

// needData returns the path of rel inside the public rainbow data, or
// skips t.
func needData(t testing.TB, rel string) string {
	t.Helper()
	return filepath.Join(pubdata.Need(t, "rainbow"), rel)
}

// constModel predicts duration = slope × memory per package.
type constModel map[string]float64

func (m constModel) Predict(pkg string, mem float64) (float64, error) {
	s, ok := m[pkg]
	if !ok {
		return 0, errUnknownPackage
	}
	return s * mem, nil
}

func mustVersion(t *testing.T, s string) matcher.Version {
	t.Helper()
	v, err := matcher.ParseVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
