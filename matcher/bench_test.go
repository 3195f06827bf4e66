package matcher

import "testing"

// BenchmarkMatch is one job against one cluster through the public API.
func BenchmarkMatch(b *testing.B) {
	c := testCluster()
	j := Job{Nodes: 1, Requires: []Requirement{
		{Subsystem: "spack", Field: "version", Op: InRange, Min: "0.5.5", Max: "0.6.0"},
		{Subsystem: "io", Field: "type", Op: Equal, Value: "nfs"},
	}}
	b.ReportAllocs()
	for b.Loop() {
		if !(Rules{}).Match(&j, &c).ok() {
			b.Fatal("no match")
		}
	}
	reportChecks(b, int64(len(j.Requires)))
}

// reportChecks reports requirement checks per second.
func reportChecks(b *testing.B, checks int64) {
	b.ReportMetric(float64(checks)*float64(b.N)/b.Elapsed().Seconds(), "checks/s")
}
