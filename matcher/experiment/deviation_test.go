package experiment

import (
	"math"
	"sort"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestCompilerVersionDeviation pins the numbers docs/rainbow.md gives for
// the one published figure beyond 2.5 standard errors of our expectation,
// spack-build's compiler-version-subsystem build success (published 2,800
// successful builds of 31,622).
//
// At that level a job matches exactly the clusters with its compiler
// family and version, and fails only on a different arch (the versions are
// equal, so neither compiler rule can fail it). The published score is a
// sum of independent Bernoulli draws, one per job, with p = (matched
// clusters of the job's arch) / (matched clusters); its distribution is the
// Poisson binomial, computed here exactly from the data by a count
// independent of RunBuilds. The test also computes the z-scores of every
// published build-success figure that depends on the draw (7 spack-build
// levels, 3 reliabuild levels, independent draws) and their sum of
// squares.
func TestCompilerVersionDeviation(t *testing.T) {
	if testing.Short() {
		t.Skip("runs both published reproductions")
	}
	w, rep, _ := loadSpack(t)
	pub, err := LoadPublished(needData(t, "spack-build"))
	if err != nil {
		t.Fatal(err)
	}
	jobs, _ := uniqueBuildJobs(w.Jobs)
	ps := make([]float64, len(jobs))
	mean, variance := 0.0, 0.0
	for i, j := range jobs {
		k, s := 0, 0
		for _, c := range w.Clusters {
			if c.Compiler == j.Compiler && c.CompilerVersion == j.CompilerVersion {
				k++
				if c.Arch == j.Arch {
					s++
				}
			}
		}
		if k == 0 {
			t.Fatalf("job %s matches no cluster at compiler-version-subsystem", j.Name)
		}
		ps[i] = float64(s) / float64(k)
		mean += ps[i]
		variance += ps[i] * (1 - ps[i])
	}
	l := rep.Level("compiler-version-subsystem")
	exact(t, "expected successes, recount against RunBuilds", mean, l.Expected.correct.Value)
	exact(t, "SE of a draw's successes, recount against RunBuilds", math.Sqrt(variance), l.Expected.correct.SE)
	observed := pub.Level("compiler-version-subsystem").Drawn.correct.Value
	// Poisson-binomial distribution of the number of successes, exactly,
	// by adding one job at a time (in float64; the tail needed is far
	// above rounding).
	dist := []float64{1}
	for _, p := range ps {
		next := make([]float64, len(dist)+1)
		for k, q := range dist {
			next[k] += q * (1 - p)
			next[k+1] += q * p
		}
		dist = next
	}
	below := 0.0
	for k := 0; k <= int(observed); k++ {
		below += dist[k]
	}
	z := (observed - mean) / math.Sqrt(variance)
	t.Logf("compiler-version-subsystem: published %v successes, expected %.2f ± %.2f, z = %.3f, P(X ≤ %v) = %.5f (exact)",
		observed, mean, math.Sqrt(variance), z, observed, below)
	// The values docs/rainbow.md states.
	if math.Round(z*100)/100 != -2.99 || math.Round(below*10000)/10000 != 0.0013 {
		t.Errorf("z = %.4f, P = %.5f; docs/rainbow.md says z = -2.99, P = 0.0013", z, below)
	}

	// Every published build success that depends on the draw, against our
	// expectation under the published rules.
	var zs []float64
	for _, lv := range rep.Levels {
		e, p := lv.Expected.BuildSuccess, pub.Level(lv.Name)
		if e.SE == 0 || p == nil {
			continue
		}
		zs = append(zs, (p.Drawn.BuildSuccess.Mean-e.Mean)/e.SE)
	}
	vrep := publishedReliabuildReport(t)
	vpub, err := LoadPublished(needData(t, "reliabuild"))
	if err != nil {
		t.Fatal(err)
	}
	for _, lv := range vrep.Levels {
		e, p := lv.Expected.BuildSuccess, vpub.Level(lv.Name)
		if e.SE > 0 && p != nil {
			zs = append(zs, (p.Drawn.BuildSuccess.Mean-e.Mean)/e.SE)
		}
	}
	if len(zs) != 10 {
		t.Fatalf("%d draw-dependent build-success figures, want 10 (7 spack-build, 3 reliabuild)", len(zs))
	}
	chi2 := 0.0
	for _, v := range zs {
		chi2 += v * v
	}
	family := distuv.ChiSquared{K: float64(len(zs))}.Survival(chi2)
	// Chance that the largest |z| of 10 independent standard normals is at
	// least this one's.
	largest := 1 - math.Pow(1-2*distuv.UnitNormal.CDF(-math.Abs(z)), float64(len(zs)))
	sort.Float64s(zs)
	t.Logf("z of the 10 draw-dependent build-success figures: %.2f; sum of squares %.2f on %d degrees of freedom, P = %.3f; P(max |z| ≥ %.2f) = %.3f",
		zs, chi2, len(zs), family, -z, largest)
	if math.Round(chi2*10)/10 != 18.1 || math.Round(family*100)/100 != 0.05 || math.Round(largest*1000)/1000 != 0.027 {
		t.Errorf("sum of squares %.2f (P %.3f), P(max) %.4f; docs/rainbow.md says 18.1, 0.05, 0.027", chi2, family, largest)
	}
}
