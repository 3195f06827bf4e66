package experiment

import (
	"errors"
	"io/fs"
	"testing"
)

// TestLoadPublished reads both published runs and checks figures copied by
// hand from the files (reliabuild/results/scores.json and
// unmatched-summary.json, spack-build/scores.csv).
func TestLoadPublished(t *testing.T) {
	rb, err := LoadPublished(needData(t, "reliabuild"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rb.Levels) != 3 || rb.Experiment != "reliabuild" {
		t.Fatalf("reliabuild: %d levels of %q", len(rb.Levels), rb.Experiment)
	}
	none, exp := rb.Level("none").Drawn, rb.Level("expanded-subsystems").Drawn
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"none build success", none.BuildSuccess.Mean, 0.004993757802746567},
		{"none versions in range", none.correct.Value, 31537},
		{"expanded unmatched", float64(exp.Unmatched), 1293},
		{"expanded matched clusters", exp.MatchedClusters.Mean, 2.5459247000413736},
		{"unmatched jobs", float64(len(rb.UnmatchedAt)), 1293},
		{"unmatched_at of one job", float64(rb.UnmatchedAt["vdcbtocnak4kyr6g37j272g2ltecyzuh"]), 13},
		{"max percent matched of it", rb.MaxPercentMatched["vdcbtocnak4kyr6g37j272g2ltecyzuh"], 0.3939393939393939},
		// scores.json's unmatched_at entry: mean 13.890177880897138, std 4.628036325625887.
		{"unmatched_at mean", exp.UnmatchedAt.Mean, 13.890177880897138},
		{"unmatched_at std", exp.UnmatchedAt.Std, 4.628036325625887},
	} {
		exact(t, c.what, c.want, c.got)
	}
	sb, err := LoadPublished(needData(t, "spack-build"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sb.Levels) != 11 || sb.UnmatchedAt != nil {
		t.Fatalf("spack-build: %d levels, per-job unmatched_at %v", len(sb.Levels), sb.UnmatchedAt != nil)
	}
	cv := sb.Level("compiler-version-subsystem").Drawn
	exact(t, "compiler-version build success", 0.08854594902283221, cv.BuildSuccess.Mean)
	exact(t, "compiler-version points", 2800, cv.correct.Value)
	exact(t, "memory-level cost", 12706.890330441927, sb.Level("memory-subsystem").Drawn.AdditionalCost.Value)
	if _, err := LoadPublished(t.TempDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("empty directory: %v, want fs.ErrNotExist", err)
	}
}
