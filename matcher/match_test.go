package matcher

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func testCluster() Cluster {
	return Cluster{
		Name: "red", Nodes: 4, Cores: 16,
		State: map[string]float64{"nodes_free": 2},
		Subsystems: map[string]*Subsystem{
			"spack": {Name: "spack", Vertices: []Vertex{
				{ID: "s1", Type: "package", Fields: map[string]string{"version": "0.5.1", "name": "spack"}},
				{ID: "s2", Type: "package", Fields: map[string]string{"version": "0.6.0"}},
				{ID: "s3", Type: "package", Fields: map[string]string{"version": "not-a-version"}},
			}},
			"io": {Name: "io", Vertices: []Vertex{
				{ID: "i1", Type: "shm", Fields: map[string]string{"type": "shm"}},
				{ID: "i2", Type: "nfs", Fields: map[string]string{"type": "nfs"}},
			}},
		},
	}
}

func TestMatch(t *testing.T) {
	c := testCluster()
	tests := []struct {
		name    string
		job     Job
		verdict Verdict
		kinds   []ReasonKind
	}{
		{"range any vertex", Job{Nodes: 1, Requires: []Requirement{{Subsystem: "spack", Field: "version", Op: InRange, Min: "0.5.5", Max: "0.6.0"}}}, Matched, nil},
		{"range inclusive upper end", Job{Nodes: 1, Requires: []Requirement{{Subsystem: "spack", Field: "version", Op: InRange, Min: "0.6", Max: "0.6"}}}, Matched, nil},
		{"range open max", Job{Nodes: 1, Requires: []Requirement{{Subsystem: "spack", Field: "version", Op: InRange, Min: "0.5.1"}}}, Matched, nil},
		{"out of range", Job{Nodes: 1, Requires: []Requirement{{Subsystem: "spack", Field: "version", Op: InRange, Min: "1.0"}}}, Never, []ReasonKind{OutOfRange}},
		{"equal", Job{Nodes: 1, Requires: []Requirement{{Subsystem: "io", Field: "type", Op: Equal, Value: "nfs"}}}, Matched, nil},
		{"not equal", Job{Nodes: 1, Requires: []Requirement{{Subsystem: "io", Field: "type", Op: Equal, Value: "lustre"}}}, Never, []ReasonKind{NotEqual}},
		{"at least", Job{Nodes: 1, Requires: []Requirement{{Subsystem: "spack", Field: "version", Op: InRange, Min: "0.6"}}}, Matched, nil},
		{"at most", Job{Nodes: 1, Requires: []Requirement{{Subsystem: "spack", Field: "version", Op: InRange, Max: "0.5"}}}, Never, []ReasonKind{OutOfRange}},
		{"missing field", Job{Nodes: 1, Requires: []Requirement{{Subsystem: "spack", Field: "arch", Op: Equal, Value: "x86_64"}}}, Never, []ReasonKind{MissingField}},
		{"missing subsystem", Job{Nodes: 1, Requires: []Requirement{{Subsystem: "gpu", Field: "model", Op: Equal, Value: "a100"}}}, Never, []ReasonKind{MissingSubsystem}},
		{"bad requirement version", Job{Nodes: 1, Requires: []Requirement{{Subsystem: "spack", Field: "version", Op: InRange, Min: "x.y"}}}, Never, []ReasonKind{BadVersion}},
		{"every failure reported in order", Job{Nodes: 1, Requires: []Requirement{
			{Subsystem: "io", Field: "type", Op: Equal, Value: "shm"},
			{Subsystem: "io", Field: "type", Op: Equal, Value: "lustre"},
			{Subsystem: "spack", Field: "version", Op: InRange, Min: "9"},
		}}, Never, []ReasonKind{NotEqual, OutOfRange}},
		{"too few nodes before attributes", Job{Nodes: 8, Requires: []Requirement{{Subsystem: "gpu", Field: "x", Op: Equal, Value: "y"}}}, Never, []ReasonKind{TooFewNodes}},
		{"too few cores", Job{Nodes: 1, Cores: 32}, Never, []ReasonKind{TooFewCores}},
		{"no capacity now", Job{Nodes: 3}, NotNow, []ReasonKind{NoFreeNodes}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Rules{}.Match(&tt.job, &c)
			if res.Verdict != tt.verdict {
				t.Errorf("verdict = %s, want %s (%v)", res.Verdict, tt.verdict, res.Reasons)
			}
			var kinds []ReasonKind
			for _, r := range res.Reasons {
				kinds = append(kinds, r.Kind)
				if r.Detail == "" {
					t.Errorf("reason %s has no detail", r.Kind)
				}
			}
			if diff := cmp.Diff(tt.kinds, kinds); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMatchExclusive(t *testing.T) {
	c := testCluster()
	j := Job{Requires: []Requirement{{Subsystem: "spack", Field: "version", Op: InRange, Min: "0.6.0", Max: "0.7"}}}
	if !(Rules{}).Match(&j, &c).ok() {
		t.Error("inclusive: 0.6.0 should be in [0.6.0, 0.7]")
	}
	if (Rules{Exclusive: true}).Match(&j, &c).ok() {
		t.Error("exclusive: 0.6.0 should not be in (0.6.0, 0.7)")
	}
}

// TestMatchOrderIndependent shuffles vertices and requirements: the verdict
// and the set of failed requirements must not change.
func TestMatchOrderIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	base := testCluster()
	job := Job{Nodes: 1, Requires: []Requirement{
		{Subsystem: "spack", Field: "version", Op: InRange, Min: "0.5.5", Max: "0.6.0"},
		{Subsystem: "io", Field: "type", Op: Equal, Value: "nfs"},
		{Subsystem: "io", Field: "type", Op: Equal, Value: "gpfs"},
	}}
	want := Rules{}.Match(&job, &base)
	for range 50 {
		c := testCluster()
		for _, s := range c.Subsystems {
			r.Shuffle(len(s.Vertices), func(i, j int) { s.Vertices[i], s.Vertices[j] = s.Vertices[j], s.Vertices[i] })
		}
		j := job
		j.Requires = slices.Clone(job.Requires)
		perm := r.Perm(len(j.Requires))
		for i, p := range perm {
			j.Requires[i] = job.Requires[p]
		}
		got := Rules{}.Match(&j, &c)
		if got.Verdict != want.Verdict || len(got.Reasons) != len(want.Reasons) {
			t.Fatalf("shuffled: %s %v, want %s %v", got.Verdict, got.Reasons, want.Verdict, want.Reasons)
		}
		for _, rs := range got.Reasons {
			if j.Requires[rs.Requirement].Value != "gpfs" {
				t.Fatalf("reason points at requirement %v", j.Requires[rs.Requirement])
			}
		}
	}
}

func TestMatchDoesNotMutate(t *testing.T) {
	c, want := testCluster(), testCluster()
	j := Job{Nodes: 1, Requires: []Requirement{{Subsystem: "spack", Field: "version", Op: InRange, Min: "0.1"}}}
	jw := j
	jw.Requires = slices.Clone(j.Requires)
	Rules{}.Match(&j, &c)
	if diff := cmp.Diff(want, c, cmpopts.IgnoreUnexported(Job{}, Cluster{}, Subsystem{})); diff != "" {
		t.Errorf("cluster changed:\n%s", diff)
	}
	if diff := cmp.Diff(jw, j, cmpopts.IgnoreUnexported(Job{}, Cluster{}, Subsystem{})); diff != "" {
		t.Errorf("job changed:\n%s", diff)
	}
}
