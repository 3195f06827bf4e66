package synth

import (
	"bytes"
	"encoding/csv"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestJobTableDeterministic(t *testing.T) {
	a := JobTable(AnvilLike(), 200, rand.New(rand.NewPCG(3, 4)))
	b := JobTable(AnvilLike(), 200, rand.New(rand.NewPCG(3, 4)))
	if !slices.EqualFunc(a, b, func(x, y JobsRow) bool {
		same := func(u, v float64) bool { return u == v || (math.IsNaN(u) && math.IsNaN(v)) }
		return x.JID == y.JID && x.Host == y.Host && x.Time.Equal(y.Time) && same(x.GPU, y.GPU) && same(x.MemUsed, y.MemUsed)
	}) {
		t.Error("same seed, different rows")
	}
	f1 := JobsFeatures(ConteLike(), 100, rand.New(rand.NewPCG(1, 1)))
	f2 := JobsFeatures(ConteLike(), 100, rand.New(rand.NewPCG(1, 1)))
	if !slices.Equal(f1, f2) || len(f1) != 600 {
		t.Error("JobsFeatures not reproducible or wrong size")
	}
}

func TestJobTableContents(t *testing.T) {
	for _, p := range []ClusterProfile{AnvilLike(), ConteLike(), StampedeLike()} {
		t.Run(p.Name, func(t *testing.T) {
			rows := JobTable(p, 3000, rand.New(rand.NewPCG(9, 9)))
			parts := map[string]bool{}
			bigMem, gpuRows := false, 0
			for _, r := range rows {
				parts[r.Queue] = true
				if !r.End.After(r.Start) || r.Start.Before(r.Submit) {
					t.Fatalf("job %s: times out of order", r.JID)
				}
				if r.Timelimit*p.TimelimitUnitSec < r.End.Sub(r.Start).Seconds() {
					t.Fatalf("job %s runs past its limit", r.JID)
				}
				if !math.IsNaN(r.GPU) {
					gpuRows++
				}
				if r.MemUsed >= 512 {
					bigMem = true
				}
			}
			if len(parts) != len(p.Partitions) {
				t.Errorf("partitions seen %v, want all %d", parts, len(p.Partitions))
			}
			if gpuRows == 0 || !bigMem {
				t.Errorf("gpu rows %d, memory >= 512 GB seen %v: both needed so every regime occurs", gpuRows, bigMem)
			}
			var buf bytes.Buffer
			if err := JobsWriteCSV(&buf, rows[:10]); err != nil {
				t.Fatal(err)
			}
			recs, err := csv.NewReader(&buf).ReadAll()
			if err != nil || len(recs) != 11 || recs[0][9] != "jid" {
				t.Errorf("CSV: %d records, err %v", len(recs), err)
			}
		})
	}
}

func TestJobsFeaturesColumns(t *testing.T) {
	f := JobsFeatures(AnvilLike(), 500, rand.New(rand.NewPCG(5, 5)))
	for i := 0; i < len(f); i += 6 {
		ncores, nhosts, tl, rt, q, frac := f[i], f[i+1], f[i+2], f[i+3], f[i+4], f[i+5]
		// runtime_fraction is computed by the same division, so it must
		// be bit-identical: no tolerance.
		if ncores < 1 || nhosts < 1 || tl <= 0 || rt <= 0 || q < 0 || frac != rt/tl || rt > tl {
			t.Fatalf("row %d: %v", i/6, f[i:i+6])
		}
	}
	if got := JobsFeatureNames(); len(got) != 6 || got[5] != "runtime_fraction" {
		t.Errorf("names %v", got)
	}
}

// TestJobsFeaturesMatchesJobTable checks the documented relation: the same
// generator state gives the same first job in both, with the features
// JobTable's rows imply (timelimit in the profile's unit, times to the second).
func TestJobsFeaturesMatchesJobTable(t *testing.T) {
	for _, p := range []ClusterProfile{AnvilLike(), ConteLike(), StampedeLike()} {
		t.Run(p.Name, func(t *testing.T) {
			f := JobsFeatures(p, 1, rand.New(rand.NewPCG(11, 12)))
			r := JobTable(p, 1, rand.New(rand.NewPCG(11, 12)))[0]
			rt, q := r.End.Sub(r.Start).Seconds(), r.Start.Sub(r.Submit).Seconds()
			tl := r.Timelimit * p.TimelimitUnitSec
			got := []float64{r.NCores, r.NHosts, tl, rt, q, rt / tl}
			if !slices.Equal(f, got) {
				t.Errorf("JobsFeatures %v, JobTable's first job %v", f, got)
			}
		})
	}
}
