package lstm

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/internal/synth"
)

// synthEvents returns the events of a synthetic global log.
func synthEvents(t *testing.T, seed uint64, jobs int) []eventlog.Event {
	t.Helper()
	var buf bytes.Buffer
	if _, err := synth.CondorGlobalLog(&buf, synth.CondorLogConfig{Seed: seed, Jobs: jobs, HoldRate: 0.4, Header: true}); err != nil {
		t.Fatal(err)
	}
	evs, err := eventlog.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// heldJobs returns the jobs of a synthetic global log.
func heldJobs(t *testing.T) []*eventlog.Job {
	t.Helper()
	evs := synthEvents(t, 3, 200)
	// Cut the log at the middle hold so that some jobs are on hold at its end.
	var holds []int
	for i, e := range evs {
		if e.Code == eventlog.Held {
			holds = append(holds, i)
		}
	}
	if len(holds) == 0 {
		t.Fatal("synthetic log without a hold")
	}
	return eventlog.Group("global.log", evs[:holds[len(holds)/2]+1])
}

func TestDecide(t *testing.T) {
	jobs := heldJobs(t)
	b := eventlog.Builder{E: 46, M: 4, Frame: time.Minute, J: 2, Seed: 7, Pad: true, SeedCompat: true}
	m := New(Architecture{Inputs: 2 * 46, Hidden: 3, Layers: 1}, rand.New(rand.NewPCG(1, 2)))
	ds, err := Decide(m, b, 0.5, jobs)
	if err != nil {
		t.Fatal(err)
	}
	samples, err := b.BuildOnHold(jobs)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) == 0 || len(ds) != len(samples) {
		t.Fatalf("%d decisions for %d jobs on hold", len(ds), len(samples))
	}
	for i, d := range ds {
		if p := m.Predict(samples[i].Seq()); d.Job != samples[i].Job || d.P != p || d.Release != (p >= 0.5) {
			t.Errorf("decision %d = %+v, want job %v P %v", i, d, samples[i].Job, p)
		}
		if d.HeldAt.IsZero() {
			t.Errorf("decision %d has no hold time", i)
		}
	}

	bad := m.Clone()
	bad.params[len(bad.params)-1] = math.NaN()
	if _, err := Decide(bad, b, 0.5, jobs); !errors.Is(err, ErrNaN) {
		t.Errorf("NaN model: err = %v, want ErrNaN", err)
	}
	wide := eventlog.Builder{E: 46, M: 4, Frame: time.Minute, J: 3, Pad: true, SeedCompat: true}
	if _, err := Decide(m, wide, 0.5, jobs); !errors.Is(err, ErrWidth) {
		t.Errorf("J×E wider than the model: err = %v, want ErrWidth", err)
	}
	defer func() {
		if recover() == nil {
			t.Errorf("forward framing: no panic")
		}
	}()
	Decide(m, eventlog.Builder{E: 46, M: 4, Frame: time.Minute, J: 2, Pad: true, Forward: true}, 0.5, jobs)
}

// TestDecideHolds checks that each hold read from a stream is decided once,
// as Decide decides it on the log cut at that hold.
func TestDecideHolds(t *testing.T) {
	evs := synthEvents(t, 4, 120)
	b := eventlog.Builder{E: 46, M: 4, Frame: time.Minute, J: 2, Seed: 7, Pad: true, SeedCompat: true}
	m := New(Architecture{Inputs: 2 * 46, Hidden: 3, Layers: 1, Cell: GRU}, rand.New(rand.NewPCG(1, 2)))
	var got []Decision
	seq := func(yield func(eventlog.Event, error) bool) {
		for _, e := range evs {
			if !yield(e, nil) {
				return
			}
		}
	}
	if err := DecideHolds(t.Context(), m, b, 0.5, "log", seq, func(d Decision) error { got = append(got, d); return nil }); err != nil {
		t.Fatal(err)
	}
	k := 0
	for i, e := range evs {
		if e.Code != eventlog.Held {
			continue
		}
		ds, err := Decide(m, b, 0.5, eventlog.Group("log", evs[:i+1]))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if d.Job.JobID == e.Job {
				if k >= len(got) || got[k] != d {
					t.Fatalf("hold %d (%v): streamed %+v, cut log %+v", k, e.Job, got[min(k, len(got)-1)], d)
				}
				k++
			}
		}
	}
	if k == 0 || k != len(got) {
		t.Errorf("%d holds decided from the stream, %d from the cut logs", len(got), k)
	}
}
