package lstm

import (
	"context"
	"fmt"
	"iter"
	"math"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
)

// Decision is a model's decision on one job on hold.
type Decision struct {
	Job eventlog.Key
	// HeldAt is the time of the hold the job is in now (its latest, for a
	// job released and held again): the decision's time.
	HeldAt time.Time
	// HoldCode is the HTCondor hold reason code of that hold (0 when the
	// hold event has none).
	HoldCode int
	Release  bool    // P(release) is at least the threshold
	P        float64 // P(release)
}

// Decide decides, with the model n, every job whose last state in jobs is a hold: release
// when P(release) of its tensor is at least threshold, remove otherwise.
// Decisions are in the order of jobs; no job on hold gives none.
//
// A decision is made at decision time, the hold the job is in now: its
// tensor is built by b.BuildOnHold from the events written up to that
// hold only, for the job and for the jobs around it, so that b must be
// the Builder the model's training samples were built with (the same E,
// M, Frame, J and Seed): the same logs and model then give the same
// decisions in any process and under any file name, and a job held once
// gets the tensor it had as a training sample. Decide panics if b frames
// forward (Builder.Forward without SeedCompat), which reads events after
// the hold. A model whose input width is not b.J×b.E is an error wrapping
// ErrWidth.
//
// A probability that is not a number (a model with NaN weights) is an
// error wrapping ErrNaN naming the job: removal cannot be undone, so it
// never defaults to it.
func Decide(n Network, b eventlog.Builder, threshold float64, jobs []*eventlog.Job) ([]Decision, error) {
	if b.Forward && !b.SeedCompat {
		panic("lstm: Decide with a Builder that frames forward")
	}
	samples, err := b.BuildOnHold(jobs)
	if err != nil {
		return nil, fmt.Errorf("lstm: Decide: %w", err)
	}
	held := map[eventlog.Key]eventlog.Event{}
	for _, j := range jobs {
		if ev, ok := j.LastState(); ok && ev.Code == eventlog.Held {
			held[j.Key] = ev
		}
	}
	out := make([]Decision, 0, len(samples))
	for i := range samples {
		s := &samples[i]
		ps, err := n.Probabilities([][][]float64{s.Seq()})
		if err != nil {
			return nil, fmt.Errorf("lstm: Decide: job %v: %w", s.Job, err)
		}
		p := ps[0]
		if math.IsNaN(p) {
			return nil, fmt.Errorf("lstm: Decide: job %v: P(release) is NaN: %w", s.Job, ErrNaN)
		}
		ev := held[s.Job]
		d := Decision{Job: s.Job, HeldAt: ev.Time, Release: p >= threshold, P: p}
		if hi, err := ev.HoldInfo(); err == nil && hi.HasCode {
			d.HoldCode = hi.Code
		}
		out = append(out, d)
	}
	return out, nil
}

// DecideHolds reads events as a log is written (eventlog.Follow's
// sequence, or any other) and calls decided with the decision on a job
// each time it enters a hold: one call per held event, made as Decide
// makes it from the events read up to and including that hold, the jobs
// grouped under source. So a job decided live gets the decision Decide
// gives on the log cut at its hold. Each hold regroups the events read so
// far, so the cost grows with the log's length times its holds.
//
// It returns the first error of events or decided, nil when events end,
// and ctx.Err() when ctx ends first.
func DecideHolds(ctx context.Context, n Network, b eventlog.Builder, threshold float64, source string,
	events iter.Seq2[eventlog.Event, error], decided func(Decision) error) error {
	var evs []eventlog.Event
	for ev, err := range events {
		if err != nil {
			return fmt.Errorf("lstm: DecideHolds: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		evs = append(evs, ev)
		if ev.Code != eventlog.Held {
			continue
		}
		ds, err := Decide(n, b, threshold, eventlog.Group(source, evs))
		if err != nil {
			return err
		}
		key := eventlog.Key{Source: source, JobID: ev.Job}
		for _, d := range ds {
			if d.Job == key {
				if err := decided(d); err != nil {
					return err
				}
				break
			}
		}
	}
	return ctx.Err()
}
