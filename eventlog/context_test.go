package eventlog_test

import (
	"slices"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/internal/synth"
)

// TestContextAtDecisionTime: at decision time the context jobs of a
// sample are chosen from what was written up to the decision only, and
// the draw depends on the job ids and the seed, not on the log's name or
// on the other samples. For samples of the synthetic log, Build on the
// log cut at the primary's first hold (every job's later events gone)
// gives the same context jobs and the same tensor as Build on the whole
// log, and so does BuildOnHold on the cut log, the call decisions make;
// renaming the log changes nothing but the keys' source; every context
// job has a non-zero row. (Before one rule was shared, Build drew among
// jobs whose last event, after the hold included, reached the window, so
// most of these comparisons failed and about half of the context rows of
// SeedCompat samples were zero.)
func TestContextAtDecisionTime(t *testing.T) {
	jobs, _ := synthJobs(t, synth.CondorLogConfig{Seed: 5, Jobs: 600, Noise: true, JobAds: true, Header: true})
	byKey := map[eventlog.Key]*eventlog.Job{}
	for _, j := range jobs {
		byKey[j.Key] = j
	}
	renamed := make([]*eventlog.Job, len(jobs))
	for i, j := range jobs {
		c := *j
		c.Key.Source = "another-name.log"
		renamed[len(jobs)-1-i] = &c // and in another order
	}
	for _, compat := range []bool{false, true} {
		b := eventlog.Builder{M: 10, J: 4, Frame: time.Minute, Seed: 1, Pad: true, Unlabeled: true, SeedCompat: compat}
		all, err := b.Build(jobs)
		if err != nil {
			t.Fatal(err)
		}
		other, err := b.Build(renamed)
		if err != nil {
			t.Fatal(err)
		}
		byID := map[eventlog.JobID]eventlog.Sample{}
		for _, s := range other {
			byID[s.Job.JobID] = s
		}
		slots, zero := 0, 0
		for _, s := range all {
			r := byID[s.Job.JobID]
			if !slices.Equal(r.X, s.X) || len(r.Context()) != len(s.Context()) {
				t.Errorf("compat %v, %v: the renamed, reordered log gives another sample", compat, s.Job)
			} else {
				for k := range s.Context() {
					if r.Context()[k].JobID != s.Context()[k].JobID {
						t.Errorf("compat %v, %v: context %d is %v on the renamed log, %v", compat, s.Job, k, r.Context()[k], s.Context()[k])
					}
				}
			}
			for k, c := range s.Context() {
				if c == (eventlog.Key{}) {
					continue
				}
				slots++
				if rowsAllZero(&s, k+1) {
					zero++
				}
			}
		}
		if slots == 0 || zero > 0 {
			t.Errorf("compat %v: %d of %d context slots are all-zero rows", compat, zero, slots)
		}
		checked := 0
		for _, s := range all {
			if checked == 25 {
				break // each check rebuilds the log
			}
			h := firstHold(byKey[s.Job])
			var cut []*eventlog.Job
			for _, j := range jobs {
				if c := truncated(j, h); len(c.Events) > 0 {
					cut = append(cut, c)
				}
			}
			again, err := b.Build(cut)
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(again, func(a eventlog.Sample) bool { return a.Job == s.Job })
			if i < 0 {
				t.Fatalf("compat %v, %v: no sample on the log cut at its hold", compat, s.Job)
			}
			if !slices.Equal(again[i].Context(), s.Context()) || !slices.Equal(again[i].X, s.X) {
				t.Errorf("compat %v, %v: context %v on the whole log, %v on the log as it stood at its hold", compat, s.Job, s.Context(), again[i].Context())
			}
			onHold, err := b.BuildOnHold(cut)
			if err != nil {
				t.Fatal(err)
			}
			i = slices.IndexFunc(onHold, func(a eventlog.Sample) bool { return a.Job == s.Job })
			if i < 0 {
				// Released in the second of its hold: not on hold in the cut log.
				continue
			}
			checked++
			if !slices.Equal(onHold[i].Context(), s.Context()) || !slices.Equal(onHold[i].X, s.X) {
				t.Errorf("compat %v, %v: BuildOnHold draws %v, Build %v", compat, s.Job, onHold[i].Context(), s.Context())
			}
		}
		if checked < 20 {
			t.Errorf("compat %v: only %d samples checked", compat, checked)
		}
	}
}

// TestBuildOnHold: a job released and held again is framed at the hold it
// is in now, not its first; jobs not on hold have no sample.
func TestBuildOnHold(t *testing.T) {
	m := time.Minute
	rehold := mkJob(1, spec{0, 0, false}, spec{1, m, false}, spec{12, 2 * m, false}, spec{13, 20 * m, false}, spec{1, 21 * m, false}, spec{12, 30 * m, false})
	done := mkJob(2, spec{0, 0, false}, spec{12, m, false}, spec{13, 2 * m, false}, spec{5, 3 * m, false})
	s, err := eventlog.Builder{M: 3, Frame: time.Minute}.BuildOnHold([]*eventlog.Job{rehold, done})
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 1 || s[0].Job != rehold.Key {
		t.Fatalf("%d samples, want the re-held job's only", len(s))
	}
	if got, want := s[0].Start, base.Add(28*m); !got.Equal(want) {
		t.Errorf("window starts %v, want %v (two frames before the second hold)", got, want)
	}
	if got := rowsOf(t, &s[0], 0); !slices.Equal(got, []int{1, 1, 12}) {
		t.Errorf("rows %v, want [1 1 12]", got)
	}
}

func rowsAllZero(s *eventlog.Sample, j int) bool {
	for m := range s.M {
		for e := range s.E {
			if s.At(j, m, e) != 0 {
				return false
			}
		}
	}
	return true
}
