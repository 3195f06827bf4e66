package heldjobs

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/lstm"
)

// ErrNoHeldJob reports logs in which no job is on hold.
var ErrNoHeldJob = errors.New("no job on hold in the logs")

// Decision is a model's decision on one job on hold.
type Decision struct {
	Job    eventlog.Key
	HeldAt time.Time // the first hold: the decision's time
	// HoldCode is the HTCondor hold reason code of the first hold (0 when
	// the hold event has none).
	HoldCode int
	// Release is true when P(release) is at least the model's threshold.
	Release  bool
	PRelease float64
}

// Decide decides, with the model of a model directory, every job whose
// last state in jobs is a hold: release or remove, with P(release).
//
// A decision is made at decision time: the job's tensor is built from the
// events written up to its first hold only, for the job and for the jobs
// around it. Every job's history is cut at that instant before the context
// jobs are chosen among those alive in the window (first event at or before
// its end, latest event up to the hold at or after its start), so a
// context job's later events cannot even change which jobs are drawn; the
// draw is seeded by the model's seed and the held job's key, so the same
// logs and model give the same decisions in any process. The model must
// frame at the hold (not eventlog's Forward mode, which reads events after
// it). Decisions are in the order of jobs.
//
// No job on hold is an error wrapping ErrNoHeldJob; a forward-framed model
// one wrapping ErrModelDir.
func Decide(m *lstm.Model, info ModelInfo, jobs []*eventlog.Job) ([]Decision, error) {
	if info.Forward {
		return nil, fmt.Errorf("heldjobs: %w: the model was trained on forward framing, which reads events after the hold; decisions need a model framed at the hold", ErrModelDir)
	}
	sh := info.shape()
	b := builder(Data{E: info.E, Seed: info.Seed}, sh)
	// Each job's events in time order, for cutting at an instant.
	type hist struct {
		job   *eventlog.Job
		times []int64 // sorted
		order []int   // event indices in time order
	}
	hs := make([]hist, 0, len(jobs))
	for _, j := range jobs {
		if len(j.Events) == 0 {
			continue
		}
		h := hist{job: j, order: make([]int, len(j.Events))}
		for i := range h.order {
			h.order[i] = i
		}
		sort.SliceStable(h.order, func(a, c int) bool { return j.Events[h.order[a]].Time.Before(j.Events[h.order[c]].Time) })
		h.times = make([]int64, len(h.order))
		for i, k := range h.order {
			h.times[i] = j.Events[k].Time.UnixNano()
		}
		hs = append(hs, h)
	}
	// upTo returns the job's events written at or before t, in log order.
	upTo := func(h *hist, t int64) *eventlog.Job {
		n := sort.Search(len(h.times), func(i int) bool { return h.times[i] > t })
		keep := slices.Clone(h.order[:n])
		slices.Sort(keep)
		evs := make([]eventlog.Event, len(keep))
		for i, k := range keep {
			evs[i] = h.job.Events[k]
		}
		return &eventlog.Job{Key: h.job.Key, Events: evs}
	}
	frame := int64(sh.Frame)
	var out []Decision
	for i := range hs {
		h := &hs[i]
		last, ok := h.job.LastState()
		if !ok || last.Code != eventlog.Held {
			continue
		}
		var first eventlog.Event
		for _, ev := range h.job.Events {
			if ev.Code == eventlog.Held {
				first = ev
				break
			}
		}
		at := first.Time.UnixNano()
		// The window eventlog.Builder reads for this framing.
		lo := at - int64(sh.M)*frame + 1
		if !b.SeedCompat {
			lo = at - int64(sh.M-1)*frame
		}
		var cand []*eventlog.Job
		for k := range hs {
			c := &hs[k]
			if k == i || c.times[0] > at {
				continue
			}
			n := sort.Search(len(c.times), func(x int) bool { return c.times[x] > at })
			if c.times[n-1] >= lo {
				cand = append(cand, upTo(c, at))
			}
		}
		slices.SortFunc(cand, func(a, c *eventlog.Job) int { return compareKey(a.Key, c.Key) })
		need := min(sh.J-1, len(cand))
		r := rand.New(rand.NewPCG(info.Seed, keyHash(h.job.Key)))
		for k := 0; k < need; k++ {
			x := k + r.IntN(len(cand)-k)
			cand[k], cand[x] = cand[x], cand[k]
		}
		s, err := b.Sample(upTo(h, at), cand[:need])
		if err != nil {
			return nil, fmt.Errorf("heldjobs: job %v: %w", h.job.Key, err)
		}
		d, p := m.Decide(s.Seq(), info.Threshold)
		dec := Decision{Job: h.job.Key, HeldAt: first.Time, Release: d == lstm.Release, PRelease: p}
		if hi, err := first.HoldInfo(); err == nil && hi.HasCode {
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

func compareKey(a, b eventlog.Key) int {
	return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Proc, b.Proc), cmp.Compare(a.Subproc, b.Subproc))
}

func keyHash(k eventlog.Key) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d.%d.%d", k.Source, k.Cluster, k.Proc, k.Subproc)
	return h.Sum64()
}
