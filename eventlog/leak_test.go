package eventlog_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/internal/pubdata"
	"github.com/crosscluster/crosscluster/internal/synth"
)

// truncated returns a copy of j without the events after t.
func truncated(j *eventlog.Job, t time.Time) *eventlog.Job {
	c := *j
	c.Events = slices.DeleteFunc(slices.Clone(j.Events), func(ev eventlog.Event) bool { return ev.Time.After(t) })
	return &c
}

func firstHold(j *eventlog.Job) time.Time {
	for _, ev := range j.Events {
		if ev.Code == eventlog.Held {
			return ev.Time
		}
	}
	return time.Time{}
}

// leaks builds every sample of jobs with b and counts those whose tensor
// changes when every job in it (primary and context) loses the events
// written after the primary's first hold, the decision time.
func leaks(t *testing.T, b eventlog.Builder, jobs []*eventlog.Job) (leaked, total int) {
	t.Helper()
	samples, err := b.Build(jobs)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[eventlog.Key]*eventlog.Job{}
	for _, j := range jobs {
		byKey[j.Key] = j
	}
	for _, s := range samples {
		h := firstHold(byKey[s.Job])
		var ctx []*eventlog.Job
		for _, k := range s.Context() {
			if k == (eventlog.Key{}) {
				continue
			}
			ctx = append(ctx, truncated(byKey[k], h))
		}
		again, err := b.Sample(truncated(byKey[s.Job], h), ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(again.X, s.X) {
			leaked++
		}
	}
	return leaked, len(samples)
}

// TestDecisionTimeNoLeak: with the default framing, no sample of any
// sample log holds an event written after its decision time, for the
// primary or a context job: every tensor is the same when all its jobs'
// later events are removed. Forward framing, on the same logs, does leak
// (which shows the check can fail).
func TestDecisionTimeNoLeak(t *testing.T) {
	type log struct {
		name string
		jobs []*eventlog.Job
	}
	var logs []log
	jobs, _ := synthJobs(t, synth.CondorLogConfig{Seed: 5, Jobs: 600, Noise: true, JobAds: true, Header: true})
	logs = append(logs, log{"synthetic", jobs})
	if dir, err := pubdata.Dir("htcondor"); err == nil {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		for _, p := range paths {
			if _, err := os.Stat(p); err != nil {
				continue
			}
			evs, _ := readFile(t, p, func(r *eventlog.Reader) { r.Lenient = true })
			logs = append(logs, log{filepath.Base(p), eventlog.Group(filepath.Base(p), evs)})
		}
	}
	fwdLeaks := 0
	for _, l := range logs {
		for _, m := range []int{10, 60} {
			b := eventlog.Builder{M: m, J: 4, Frame: time.Minute, Seed: 1, Pad: true, Unlabeled: true}
			leaked, n := leaks(t, b, l.jobs)
			if leaked > 0 {
				t.Errorf("%s, M=%d: %d of %d default samples change without the events after the decision", l.name, m, leaked, n)
			}
			b.Forward = true
			fl, _ := leaks(t, b, l.jobs)
			fwdLeaks += fl
			if n > 0 {
				t.Logf("%s, M=%d: %d samples; forward framing leaks in %d", l.name, m, n, fl)
			}
		}
	}
	if fwdLeaks == 0 {
		t.Error("forward framing leaked in no sample: the check cannot tell")
	}
}
