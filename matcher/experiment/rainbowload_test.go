package experiment

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/crosscluster/crosscluster/matcher"
	"github.com/crosscluster/crosscluster/matcher/internal/rainbowspec"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestPublishedJobspecsLoadInRainbow writes every job of the published
// data as matcher.WriteJobspec writes it (the reliabuild jobs with their
// version ranges, the spack builds with all four subsystems' requirements),
// checks each against jobspec-go's nextgen v1 schema and types, and reads it
// back to the same requirements.
func TestPublishedJobspecsLoadInRainbow(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("42,129 jobs, about 10 s of CPU (minutes under -race); TestWriteJobspecLoadsInRainbow covers the writer in short mode")
	}
	ctx := context.Background()
	vw, err := LoadVersionWorld(ctx, needData(t, "reliabuild"))
	if err != nil {
		t.Fatal(err)
	}
	bw, err := LoadBuildWorld(ctx, needData(t, "spack-build"))
	if err != nil {
		t.Fatal(err)
	}
	var jobs []matcher.Job
	for _, j := range vw.Jobs {
		jobs = append(jobs, j.job())
	}
	for i := range bw.Jobs {
		b := &bw.Jobs[i]
		jobs = append(jobs, matcher.Job{Name: b.Name, Nodes: 2, Requires: requirements(b, "arch", "compiler", "compiler-version", "memory")})
	}
	var buf bytes.Buffer
	for _, j := range jobs {
		buf.Reset()
		if err := matcher.WriteJobspec(&buf, &j); err != nil {
			t.Fatalf("%s: %v", j.Name, err)
		}
		if err := rainbowspec.Check(buf.Bytes()); err != nil {
			t.Fatalf("%s does not load in rainbow: %v\n%s", j.Name, err, buf.String())
		}
		got, err := matcher.ReadJobspec(bytes.NewReader(buf.Bytes()), j.Name)
		if err != nil {
			t.Fatalf("%s: %v", j.Name, err)
		}
		// ReadJobspec counts a requirement given twice once (compiler ==
		// gcc comes with both the compiler and the compiler-version
		// subsystem).
		want := j
		want.Requires = slices.Compact(slices.Clone(j.Requires))
		if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(matcher.Job{})); diff != "" {
			t.Fatalf("%s: round trip (-want +got):\n%s", j.Name, diff)
		}
	}
	t.Logf("%d published jobs written, checked and read back", len(jobs))
}
