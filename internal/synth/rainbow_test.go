package synth

import (
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func parseSemver(t *testing.T, s string) semver {
	t.Helper()
	p := strings.Split(s, ".")
	if len(p) != 3 {
		t.Fatalf("version %q is not X.Y.Z", s)
	}
	var n [3]int
	for i := range p {
		v, err := strconv.Atoi(p[i])
		if err != nil {
			t.Fatalf("version %q: %v", s, err)
		}
		n[i] = v
	}
	return semver{n[0], n[1], n[2]}
}

func TestRainbowVersions(t *testing.T) {
	cfg := RainbowVersionConfig{Clusters: 7, Subsystems: 12, Jobs: 50, DepsPerJob: 4}
	a := RainbowVersions(rand.New(rand.NewPCG(3, 4)), cfg)
	b := RainbowVersions(rand.New(rand.NewPCG(3, 4)), cfg)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed gave different worlds")
	}
	if len(a.Clusters) != 7 || len(a.Jobs) != 50 {
		t.Fatalf("%d clusters, %d jobs", len(a.Clusters), len(a.Jobs))
	}
	for _, c := range a.Clusters {
		if len(c.Versions) != 12 {
			t.Errorf("cluster %s has %d subsystems", c.Name, len(c.Versions))
		}
	}
	for _, j := range a.Jobs {
		if len(j.Ranges) == 0 || j.PackageVersion == "" {
			t.Errorf("job %s: %d ranges, package version %q", j.Name, len(j.Ranges), j.PackageVersion)
		}
		for i, r := range j.Ranges {
			if i > 0 && j.Ranges[i-1].Subsystem >= r.Subsystem {
				t.Errorf("job %s: ranges not sorted", j.Name)
			}
			lo, hi := parseSemver(t, r.Min), parseSemver(t, r.Max)
			if hi.less(lo) {
				t.Errorf("job %s: empty range %v", j.Name, r)
			}
		}
	}
	// The published generator's buckets make ranges shared between jobs,
	// which is what the experiments' de-duplication relies on.
	seen := map[RainbowRange]int{}
	for _, j := range a.Jobs {
		for _, r := range j.Ranges {
			seen[r]++
		}
	}
	shared := 0
	for _, n := range seen {
		if n > 1 {
			shared++
		}
	}
	if shared == 0 {
		t.Error("no range is shared between jobs")
	}
}

func TestRainbowBuilds(t *testing.T) {
	cfg := RainbowBuildConfig{Clusters: 9, Packages: 5, Jobs: 300}
	a := RainbowBuilds(rand.New(rand.NewPCG(5, 6)), cfg)
	b := RainbowBuilds(rand.New(rand.NewPCG(5, 6)), cfg)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed gave different worlds")
	}
	if len(a.Clusters) != 9 || len(a.Jobs) != 300 {
		t.Fatalf("%d clusters, %d jobs", len(a.Clusters), len(a.Jobs))
	}
	for _, c := range a.Clusters {
		if c.Memory < rainbowMinMemory || c.Memory > rainbowMaxMemory {
			t.Errorf("cluster %s memory %g outside the published range", c.Name, c.Memory)
		}
		switch c.CostPerNodeHour {
		case 0.8, 1.6, 3.2, 4.2:
		default:
			t.Errorf("cluster %s cost %g is not a published band", c.Name, c.CostPerNodeHour)
		}
	}
	for _, j := range a.Jobs {
		if !(j.MemMin <= j.MemMean && j.MemMean <= j.MemMax) || j.Duration <= 0 {
			t.Errorf("job %s: memory %g/%g/%g, duration %g", j.Name, j.MemMin, j.MemMean, j.MemMax, j.Duration)
		}
	}
}
