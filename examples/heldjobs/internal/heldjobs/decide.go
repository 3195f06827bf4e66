package heldjobs

import (
	"errors"
	"fmt"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/lstm"
)

// ErrNoHeldJob reports logs in which no job is on hold.
var ErrNoHeldJob = errors.New("no job on hold in the logs")

// Decision is a model's decision on one job on hold.
type Decision struct {
	Job eventlog.Key
	// HeldAt is the time of the hold the job is in now (its latest, for a
	// job released and held again): the decision's time.
	HeldAt time.Time
	// HoldCode is the HTCondor hold reason code of that hold (0 when the
	// hold event has none).
	HoldCode int
	// Release is true when P(release) is at least the model's threshold.
	Release  bool
	PRelease float64
}

// Decide decides, with the model of a model directory, every job whose
// last state in jobs is a hold: release or remove, with P(release).
//
// A decision is made at decision time, the hold the job is in now: its
// tensor is built from the events written up to that hold only, for the
// job and for the jobs around it, by eventlog.Builder.BuildOnHold. The
// context jobs are chosen by the rule the training samples were built
// with (jobs with an event in the window that ends at the hold, so a
// later event cannot change which jobs are drawn), and drawn with the
// same seed: the model's seed and the held job's cluster.proc.subproc,
// never the log's file name. So the same logs and model give the same
// decisions in any process and under any file name, and a job held once
// gets the tensor it would have had as a training sample. Training
// samples are framed at a job's first hold; a job released, run again
// and held again is decided at its current hold, on its history up to
// then. The model must frame at the hold (not eventlog's Forward mode,
// which reads events after it). Decisions are in the order of jobs.
//
// No job on hold is an error wrapping ErrNoHeldJob; a forward-framed model
// one wrapping ErrModelDir.
func Decide(m *lstm.Model, info ModelInfo, jobs []*eventlog.Job) ([]Decision, error) {
	if info.Forward {
		return nil, fmt.Errorf("heldjobs: %w: the model was trained on forward framing, which reads events after the hold; decisions need a model framed at the hold", ErrModelDir)
	}
	b := builder(Data{E: info.E, Seed: info.Seed}, info.shape())
	samples, err := b.BuildOnHold(jobs)
	if err != nil {
		return nil, fmt.Errorf("heldjobs: %w", err)
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
		ev := held[s.Job]
		d, p := m.Decide(s.Seq(), info.Threshold)
		dec := Decision{Job: s.Job, HeldAt: ev.Time, Release: d == lstm.Release, PRelease: p}
		if hi, err := ev.HoldInfo(); err == nil && hi.HasCode {
			dec.HoldCode = hi.Code
		}
		out = append(out, dec)
	}
	if len(out) == 0 {
		held := 0
		for _, j := range jobs {
			if len(j.Holds()) > 0 {
				held++
			}
		}
		return nil, fmt.Errorf("heldjobs: %w: of %d jobs read, %d were held and none is on hold at the end of the logs (a decision is made for jobs still on hold)", ErrNoHeldJob, len(jobs), held)
	}
	return out, nil
}
