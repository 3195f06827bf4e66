package matcher_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/crosscluster/crosscluster/internal/pubdata"
	"github.com/crosscluster/crosscluster/matcher"
	"github.com/crosscluster/crosscluster/matcher/experiment"
)

// BenchmarkLivePoolReliabuild: matches per second against the reliabuild
// world's 100 clusters, each of its 1,602 jobs submitted and released.
func BenchmarkLivePoolReliabuild(b *testing.B) {
	dir := filepath.Join(pubdata.Need(b, "rainbow"), "reliabuild")
	w, err := experiment.LoadVersionWorld(context.Background(), dir)
	if err != nil {
		b.Skipf("reliabuild data: %v", err)
	}
	var cs []matcher.Cluster
	for _, c := range w.Clusters {
		cs = append(cs, c.Cluster())
	}
	p, err := matcher.NewPool(cs, matcher.Rules{})
	if err != nil {
		b.Fatal(err)
	}
	jobs := make([]matcher.Job, len(w.Jobs))
	for i, j := range w.Jobs {
		jobs[i] = matcher.Job{Name: j.Name}
		for _, r := range j.Ranges {
			jobs[i].Requires = append(jobs[i].Requires, matcher.Requirement{Subsystem: r.Subsystem, Field: "version", Op: matcher.InRange, Min: r.Min, Max: r.Max})
		}
	}
	b.ResetTimer()
	n := 0
	for b.Loop() {
		for i := range jobs {
			if _, err := p.Submit(&jobs[i], matcher.First{}); err != nil {
				b.Fatal(err)
			}
			p.Release(jobs[i].Name)
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "jobs/s")
	b.ReportMetric(float64(n*len(w.Clusters))/b.Elapsed().Seconds(), "matches/s")
}
