package heldjobs

import (
	"errors"
	"fmt"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/lstm"
)

// ErrNoHeldJob reports logs in which no job is on hold.
var ErrNoHeldJob = errors.New("no job on hold in the logs")

// Decide decides, with the model of a model directory, every job whose
// last state in jobs is a hold, by lstm.Decide with the Builder the
// model's training samples were built with (its shape, E and seed).
//
// No job on hold is an error wrapping ErrNoHeldJob; a forward-framed model
// one wrapping ErrModelDir.
func Decide(m *lstm.Model, info ModelInfo, jobs []*eventlog.Job) ([]lstm.Decision, error) {
	if info.Forward {
		return nil, fmt.Errorf("heldjobs: %w: the model was trained on forward framing, which reads events after the hold; decisions need a model framed at the hold", ErrModelDir)
	}
	out, err := lstm.Decide(m, info.Builder(), info.Threshold, jobs)
	if err != nil {
		return nil, fmt.Errorf("heldjobs: %w", err)
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

// Builder is the tensor builder the model's training samples were built
// with (its shape, E and seed, framed at the hold), for lstm.Decide and
// lstm.DecideHolds.
func (i ModelInfo) Builder() eventlog.Builder {
	return builder(Data{E: i.E, Seed: i.Seed, Forward: i.Forward}, i.shape())
}
