package experiment

import (
	"context"
	"math"
	"testing"
)

// TestRecord: the per-submission records add up to every level's figures
// (submissions, unmatched, expected and drawn build success, marginal
// score, runtime and cost), and the expanding levels' unmatched records
// are the report's unmatched_at and max_percent_matched.
func TestRecord(t *testing.T) {
	type sums struct {
		n, unmatched                               int
		bs, dbs, marg, dmarg, rt, drt, cost, dcost float64
	}
	check := func(t *testing.T, rep *Report, got map[string]*sums, stops map[string]Submission, marginal, costs bool) {
		t.Helper()
		for _, l := range rep.Levels {
			s := got[l.Name]
			if s == nil || s.n != l.Expected.Jobs || s.unmatched != l.Expected.Unmatched {
				t.Fatalf("%s: records %+v, level %d jobs %d unmatched", l.Name, s, l.Expected.Jobs, l.Expected.Unmatched)
			}
			m := float64(s.n - s.unmatched)
			exact(t, l.Name+" expected build success", l.Expected.BuildSuccess.Mean, s.bs/m)
			exact(t, l.Name+" drawn build success", l.Drawn.BuildSuccess.Mean, s.dbs/m)
			if marginal {
				exact(t, l.Name+" expected marginal", l.Expected.MarginalScore.Mean, s.marg/m)
				exact(t, l.Name+" drawn marginal", l.Drawn.MarginalScore.Mean, s.dmarg/m)
			}
			if costs {
				exact(t, l.Name+" expected runtime", l.Expected.AdditionalRuntime.Value, s.rt)
				exact(t, l.Name+" drawn cost", l.Drawn.AdditionalCost.Value, s.dcost)
			}
		}
		if len(stops) != len(rep.UnmatchedAt) || len(stops) == 0 {
			t.Fatalf("%d unmatched records at the expanding levels, report has %d", len(stops), len(rep.UnmatchedAt))
		}
		for job, r := range stops {
			if rep.UnmatchedAt[job] != r.Subsystems || rep.MaxPercentMatched[job] != float64(r.Subsystems)/float64(r.JobSubsystems) {
				t.Errorf("%s: record %d of %d subsystems, report %d, %v", job, r.Subsystems, r.JobSubsystems, rep.UnmatchedAt[job], rep.MaxPercentMatched[job])
			}
		}
	}
	collect := func(got map[string]*sums, stops map[string]Submission, expanding func(string) bool) func(Submission) {
		return func(r Submission) {
			s := got[r.Level]
			if s == nil {
				s = &sums{}
				got[r.Level] = s
			}
			s.n++
			if r.Cluster == "" {
				s.unmatched++
				if !math.IsNaN(r.BuildSuccess) {
					t.Errorf("unmatched record with a score: %+v", r)
				}
				if expanding(r.Level) {
					stops[r.Job] = r
				}
				return
			}
			s.bs += r.BuildSuccess
			s.dbs += r.DrawnBuildSuccess
			s.marg += r.MarginalScore
			s.dmarg += r.DrawnMarginalScore
			s.rt += r.Runtime
			s.drt += r.DrawnRuntime
			s.cost += r.Cost
			s.dcost += r.DrawnCost
		}
	}
	t.Run("reliabuild", func(t *testing.T) {
		w := synthVersionWorld(3, 20, 30, 300)
		got, stops := map[string]*sums{}, map[string]Submission{}
		for _, mode := range []Mode{Corrected, Published} {
			clear(got)
			clear(stops)
			rep, err := RunVersions(context.Background(), w, VersionConfig{Mode: mode, Seed: 5,
				Record: collect(got, stops, func(l string) bool { return l == "expanded-subsystems" })})
			if err != nil {
				t.Fatal(err)
			}
			check(t, rep, got, stops, true, false)
		}
	})
	t.Run("spack-build", func(t *testing.T) {
		w := synthBuildWorld(3, 30, 12, 2000)
		got, stops := map[string]*sums{}, map[string]Submission{}
		expanding := map[string]bool{"arch": true, "arch-compiler": true, "arch-compiler-compiler-version": true, "arch-compiler-compiler-version-memory": true}
		rep, err := RunBuilds(context.Background(), w, BuildConfig{Seed: 5, Record: collect(got, stops, func(l string) bool { return expanding[l] })})
		if err != nil {
			t.Fatal(err)
		}
		check(t, rep, got, stops, false, true)
	})
}
