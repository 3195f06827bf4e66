package experiment

import (
	"context"
	"fmt"
	"testing"
)

func reportChecks(b *testing.B, checks int64) {
	b.ReportMetric(float64(checks)*float64(b.N)/b.Elapsed().Seconds(), "checks/s")
}

// BenchmarkRunVersions runs the version experiment in expected and drawn
// mode on synthetic worlds of the published shape (100 clusters, 219
// subsystems) with growing job counts.
func BenchmarkRunVersions(b *testing.B) {
	for _, jobs := range []int{200, 1602} {
		b.Run(fmt.Sprintf("jobs=%d", jobs), func(b *testing.B) {
			w := synthVersionWorld(1, 100, 219, jobs)
			cfg := VersionConfig{Order: sortedSubs(w)}
			var checks int64
			b.ReportAllocs()
			for b.Loop() {
				rep, err := RunVersions(context.Background(), w, cfg)
				if err != nil {
					b.Fatal(err)
				}
				checks = rep.checks
			}
			reportChecks(b, checks)
		})
	}
}

// BenchmarkRunBuilds runs the spack-build experiment on synthetic worlds of
// the published shape (100 clusters, 171 packages).
func BenchmarkRunBuilds(b *testing.B) {
	for _, jobs := range []int{3000, 31622} {
		b.Run(fmt.Sprintf("jobs=%d", jobs), func(b *testing.B) {
			w := synthBuildWorld(1, 100, 171, jobs)
			var checks int64
			b.ReportAllocs()
			for b.Loop() {
				rep, err := RunBuilds(context.Background(), w, BuildConfig{})
				if err != nil {
					b.Fatal(err)
				}
				checks = rep.checks
			}
			reportChecks(b, checks)
		})
	}
}

// BenchmarkReproduce is the full reproduction of each published experiment,
// data loading included: load the world from ../shared/testdata/rainbow and
// run every level under the published rules.
func BenchmarkReproduce(b *testing.B) {
	b.Run("experiment=reliabuild", func(b *testing.B) {
		dir := needData(b, "reliabuild")
		var checks int64
		b.ReportAllocs()
		for b.Loop() {
			w, err := LoadVersionWorld(context.Background(), dir)
			if err != nil {
				b.Fatal(err)
			}
			rep, err := RunVersions(context.Background(), w, VersionConfig{Mode: Published})
			if err != nil {
				b.Fatal(err)
			}
			checks = rep.checks
		}
		reportChecks(b, checks)
	})
	b.Run("experiment=spack-build", func(b *testing.B) {
		dir := needData(b, "spack-build")
		var checks int64
		b.ReportAllocs()
		for b.Loop() {
			w, err := LoadBuildWorld(context.Background(), dir)
			if err != nil {
				b.Fatal(err)
			}
			rep, err := RunBuilds(context.Background(), w, BuildConfig{Mode: Published})
			if err != nil {
				b.Fatal(err)
			}
			checks = rep.checks
		}
		reportChecks(b, checks)
	})
}

// BenchmarkLoadUnique loads and de-duplicates each experiment's jobspecs,
// the work the published drivers did before submitting any job; its peer is
// testdata/peer_load.py.
func BenchmarkLoadUnique(b *testing.B) {
	b.Run("experiment=reliabuild", func(b *testing.B) {
		dir := needData(b, "reliabuild")
		b.ReportAllocs()
		for b.Loop() {
			w, err := LoadVersionWorld(context.Background(), dir)
			if err != nil {
				b.Fatal(err)
			}
			if u, _ := uniqueVersionJobs(w.Jobs); len(u) != 1602 {
				b.Fatalf("%d unique jobs", len(u))
			}
		}
	})
	b.Run("experiment=spack-build", func(b *testing.B) {
		dir := needData(b, "spack-build")
		b.ReportAllocs()
		for b.Loop() {
			w, err := LoadBuildWorld(context.Background(), dir)
			if err != nil {
				b.Fatal(err)
			}
			if u, _ := uniqueBuildJobs(w.Jobs); len(u) != 31622 {
				b.Fatalf("%d unique jobs", len(u))
			}
		}
	})
}
