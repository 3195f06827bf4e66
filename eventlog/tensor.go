package eventlog

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"sort"
	"time"
)

// Builder turns held jobs into one-hot tensors for a sequence classifier.
//
// Each sample has J jobs × M frames × E event types, laid out (j, m, e):
// X[(j*M+m)*E+e]. Job 0 is the held (primary) job; jobs 1..J-1 are context
// jobs that co-exist with it in the sample's window, drawn without
// replacement by a generator seeded from Seed and the primary's
// cluster.proc.subproc, so the same Seed gives the same samples. A job's state is the code of its latest
// event with code < E; 028 job-ad-information events never change it.
//
// Default mode, decision time: a hold decision may use only what was
// written up to the decision, the primary's first hold h. Frames run
// forward and end at h: frame m covers (h-(M-m)·Frame, h-(M-1-m)·Frame]
// and its row is the job's state sampled at the end of the frame, that is
// the latest event at or before it, carried forward through empty frames.
// Before a job's first event its rows are zero. The window is
// [h-(M-1)·Frame, h]; no event after h enters any row, for the primary or
// for a context job (TestDecisionTimeNoLeak). In Sample, a primary that
// was never held is framed at its last event instead.
//
// Forward mode (the method as first described): frames run forward from
// the primary job's first event t0; frame m covers (t0+(m-1)·Frame,
// t0+m·Frame], sampled as above and repeated after the job's last event.
// The window is [t0, t0+(M-1)·Frame], which can reach past the hold: a
// sample may then hold the primary's own later events (release 013, abort
// 009, termination 005) that its label is made of, so a classifier trained
// on it is scored on information it will not have when it must decide (on
// a 600-job synthetic pool log with J = 4, 46 of 120 samples with M = 10
// and 118 of 120 with M = 60; TestDecisionTimeNoLeak). Use it only to
// reproduce earlier results.
//
// At decision time (default and SeedCompat) a context job co-exists with
// the primary when it has an event of the tensor (code < E, not 028) in
// the window, which ends at the decision: a rule that reads nothing
// written later, and that Build and BuildOnHold share (see build). In
// Forward mode it co-exists when its first event is before the window's
// end and its last event not before the window's start. With fewer than
// J-1 such jobs, Build fails with ErrTooFewJobs, or pads the sample with
// zero jobs when Pad is set; it never loops looking for more.
type Builder struct {
	E     int           // event types; zero means DefaultE
	M     int           // frames per sample; zero means 10
	Frame time.Duration // frame length; zero means one minute
	J     int           // jobs per sample, primary included; zero means 1
	Seed  uint64
	// Pad fills missing context jobs with zero rows instead of failing.
	Pad bool
	// SeedCompat selects the published pipeline's framing (see above).
	SeedCompat bool
	// Forward selects the forward framing from the primary's first event,
	// which leaks the label (see above); ignored with SeedCompat.
	Forward bool
	// Unlabeled also builds samples for held jobs with no label.
	Unlabeled bool
}

// Builder defaults.
const (
	// DefaultE is the number of event types the published model used
	// (codes 000–045).
	DefaultE     = 46
	defaultM     = 10
	defaultFrame = time.Minute
)

// ErrNoHold reports a SeedCompat sample asked for a job that was never held.
var ErrNoHold = errors.New("job was never held")

// ErrTooFewJobs reports a held job with fewer co-existing jobs than a
// sample needs.
var ErrTooFewJobs = errors.New("too few co-existing jobs for a sample")

// Sample is one held job's tensor.
type Sample struct {
	// X has J*M*E values laid out (j, m, e): X[(j*M+m)*E+e] is 1 when job j
	// is in state e in frame m.
	X       []float32
	J, M, E int
	Label   Label
	Job     Key // the primary (held) job
	// contextJobs are jobs 1..J-1; the zero Key marks padding.
	contextJobs []Key
	// Start is the instant of frame 0's end: the primary's first hold
	// minus (M-1) frames by default, its first event in Forward mode, its
	// first hold in SeedCompat mode.
	Start time.Time
}

// rowsInto writes the (m, j·e) view row-major into dst, which holds
// J*M*E values or is nil (then it is allocated), and returns it. This is a
// transpose of the (j, m, e) layout, not a reshape.
func (s *Sample) rowsInto(dst []float32) []float32 {
	n := s.J * s.M * s.E
	if dst == nil {
		dst = make([]float32, n)
	}
	for m := 0; m < s.M; m++ {
		for j := 0; j < s.J; j++ {
			copy(dst[(m*s.J+j)*s.E:(m*s.J+j+1)*s.E], s.X[(j*s.M+m)*s.E:(j*s.M+m+1)*s.E])
		}
	}
	return dst
}

// Seq returns the (m, j·e) view a sequence model consumes, as float64 rows
// (the form lstm.Model.Predict takes): M rows, row m the concatenation over
// jobs of X[j, m, :]. The rows are new slices.
func (s *Sample) Seq() [][]float64 {
	flat := s.rowsInto(nil)
	out := make([][]float64, s.M)
	w := s.J * s.E
	for m := range out {
		out[m] = make([]float64, w)
		for i, v := range flat[m*w : (m+1)*w] {
			out[m][i] = float64(v)
		}
	}
	return out
}

func (b Builder) withDefaults() Builder {
	if b.E == 0 {
		b.E = DefaultE
	}
	if b.M == 0 {
		b.M = defaultM
	}
	if b.Frame == 0 {
		b.Frame = defaultFrame
	}
	if b.J == 0 {
		b.J = 1
	}
	if b.E < 0 || b.M < 0 || b.J < 0 || b.Frame < 0 {
		panic("eventlog: negative Builder size")
	}
	return b
}

// timeline is a job's state changes: times (Unix nanoseconds) and codes,
// in time order, only codes < E and never 028.
type timeline struct {
	key         Key
	t           []int64
	c           []int16
	first, last int64
}

func makeTimeline(j *Job, e int) timeline {
	tl := timeline{key: j.Key}
	for i := range j.Events {
		ev := &j.Events[i]
		if ev.Code < 0 || int(ev.Code) >= e || ev.Code == JobAdInformation {
			continue
		}
		tl.t = append(tl.t, ev.Time.UnixNano())
		tl.c = append(tl.c, int16(ev.Code))
	}
	// Logs are nearly sorted; keep equal times in log order.
	if !sort.SliceIsSorted(tl.t, func(a, b int) bool { return tl.t[a] < tl.t[b] }) {
		idx := make([]int, len(tl.t))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return tl.t[idx[a]] < tl.t[idx[b]] })
		t2, c2 := make([]int64, len(idx)), make([]int16, len(idx))
		for i, k := range idx {
			t2[i], c2[i] = tl.t[k], tl.c[k]
		}
		tl.t, tl.c = t2, c2
	}
	if len(tl.t) > 0 {
		tl.first, tl.last = tl.t[0], tl.t[len(tl.t)-1]
	}
	return tl
}

// Build makes one sample per held job of jobs (a job with at least one 012
// event and, unless Unlabeled is set, a Release or Remove label), in the
// order of jobs, framed at the job's first hold (or, in Forward mode, from
// its first event). Context jobs are drawn from all of jobs. jobs is not
// modified.
func (b Builder) Build(jobs []*Job) ([]Sample, error) {
	b = b.withDefaults()
	var prims []prim
	for i, j := range jobs {
		hold := int64(0)
		found := false
		for k := range j.Events {
			if j.Events[k].Code == Held {
				hold, found = j.Events[k].Time.UnixNano(), true
				break
			}
		}
		if !found {
			continue
		}
		l := j.Label()
		if l == Unlabeled && !b.Unlabeled {
			continue
		}
		prims = append(prims, prim{i, l, hold})
	}
	return b.build(jobs, prims)
}

// BuildOnHold makes one sample per job of jobs whose last state is a hold,
// in the order of jobs, framed at that hold (the one the job is in now,
// not its first): the tensor a release-or-remove decision reads now. Its
// label is the job's (usually Unlabeled). Context jobs are drawn from all
// of jobs by the rule and seed Build uses, so a job held once gets the
// same sample from BuildOnHold on the log as it stood at its hold as from
// Build on any later log. Forward framing reads events after the hold, so
// it is a caller mistake here and panics.
func (b Builder) BuildOnHold(jobs []*Job) ([]Sample, error) {
	b = b.withDefaults()
	if b.Forward && !b.SeedCompat {
		panic("eventlog: BuildOnHold with Forward framing")
	}
	var prims []prim
	for i, j := range jobs {
		if ev, ok := j.LastState(); ok && ev.Code == Held {
			prims = append(prims, prim{i, j.Label(), ev.Time.UnixNano()})
		}
	}
	return b.build(jobs, prims)
}

// prim is a primary job of a sample: its index, label and decision time.
type prim struct {
	i     int
	label Label
	at    int64
}

// build makes the samples of prims; b has its defaults.
//
// The context rule at decision time (default and SeedCompat framing): a
// context candidate is a job other than the primary with at least one
// event of the tensor (a code < E, not 028) inside the window [lo, at]
// that the primary's rows cover. It reads no event after at, so the set
// is the same on the log as it stood at the decision and on any later log
// (TestContextAtDecisionTime), and every candidate has a non-zero row in
// the window. The candidates are ordered by job id (cluster, proc,
// subproc, then source) and drawn without replacement by a PCG seeded
// with Seed and the primary's cluster.proc.subproc, never its source (a
// file name) or its place in jobs, so the draw does not depend on how the
// log is named, ordered or cut. Forward mode keeps its documented rule
// (first event before the window's end, last event, after the hold
// included, not before its start; seeded by the sample's index).
func (b Builder) build(jobs []*Job, prims []prim) ([]Sample, error) {
	tls := make([]timeline, len(jobs))
	for i, j := range jobs {
		tls[i] = makeTimeline(j, b.E)
	}
	idx := newCoexist(tls)
	forward := b.Forward && !b.SeedCompat
	var rank []int // rank[i]: job i's place in job-id order
	if !forward && b.J > 1 {
		order := make([]int, len(jobs))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(x, y int) int { return compareID(tls[x].key, tls[y].key) })
		rank = make([]int, len(jobs))
		for r, i := range order {
			rank[i] = r
		}
	}
	size := b.J * b.M * b.E
	kept := prims[:0:0]
	for _, p := range prims {
		if len(tls[p.i].t) > 0 {
			kept = append(kept, p)
		}
	}
	backing := make([]float32, len(kept)*size)
	samples := make([]Sample, 0, len(kept))
	frame := int64(b.Frame)
	var cand []int
	for n, p := range kept {
		s := Sample{X: backing[n*size : (n+1)*size : (n+1)*size], J: b.J, M: b.M, E: b.E, Label: p.label, Job: tls[p.i].key}
		var lo, hi int64 // window, inclusive
		switch {
		case b.SeedCompat:
			hi = p.at
			lo = p.at - int64(b.M)*frame + 1
		case b.Forward:
			lo = tls[p.i].first
			hi = lo + int64(b.M-1)*frame
		default:
			hi = p.at
			lo = p.at - int64(b.M-1)*frame
		}
		s.Start = time.Unix(0, func() int64 {
			if b.SeedCompat {
				return p.at
			}
			return lo
		}())
		need := b.J - 1
		var rng *rand.Rand
		if need > 0 {
			cand = idx.candidates(cand[:0], tls, lo, hi, p.i)
			if forward {
				rng = rand.New(rand.NewPCG(b.Seed, uint64(n)))
			} else {
				cand = slices.DeleteFunc(cand, func(i int) bool { return !tls[i].eventIn(lo, hi) })
				slices.SortFunc(cand, func(x, y int) int { return rank[x] - rank[y] })
				rng = rand.New(rand.NewPCG(b.Seed, jobSeed(tls[p.i].key.JobID)))
			}
		} else {
			cand = cand[:0]
		}
		if len(cand) < need && !b.Pad {
			return samples, fmt.Errorf("eventlog: job %v: %w: %d of %d", tls[p.i].key, ErrTooFewJobs, len(cand), need)
		}
		picked := min(need, len(cand))
		for k := 0; k < picked; k++ {
			r := k + rng.IntN(len(cand)-k)
			cand[k], cand[r] = cand[r], cand[k]
		}
		s.contextJobs = make([]Key, need)
		b.fill(&s, 0, &tls[p.i], p.at, lo)
		for k := 0; k < picked; k++ {
			s.contextJobs[k] = tls[cand[k]].key
			b.fill(&s, k+1, &tls[cand[k]], p.at, lo)
		}
		samples = append(samples, s)
	}
	return samples, nil
}

// eventIn reports whether the timeline has an event in [lo, hi].
func (tl *timeline) eventIn(lo, hi int64) bool {
	k, _ := slices.BinarySearch(tl.t, lo)
	return k < len(tl.t) && tl.t[k] <= hi
}

// compareID orders keys by job id, then source.
func compareID(a, b Key) int {
	return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Proc, b.Proc), cmp.Compare(a.Subproc, b.Subproc), cmp.Compare(a.Source, b.Source))
}

// jobSeed is the second word of a primary's context draw: its
// cluster.proc.subproc, hashed (FNV-1a, 64 bits).
func jobSeed(id JobID) uint64 {
	var buf [24]byte
	binary.LittleEndian.PutUint64(buf[0:], uint64(id.Cluster))
	binary.LittleEndian.PutUint64(buf[8:], uint64(id.Proc))
	binary.LittleEndian.PutUint64(buf[16:], uint64(id.Subproc))
	h := fnv.New64a()
	h.Write(buf[:])
	return h.Sum64()
}

// sample builds the tensor of one job with the given context jobs, in that
// order, without the held-job and label filters of Build: use it for a job
// on hold now, or to inspect the framing. More than J-1 context jobs is a
// caller mistake and panics; fewer fails with ErrTooFewJobs unless Pad is
// set. SeedCompat needs a held primary (ErrNoHold); by default a primary
// that was never held is framed at its latest event.
func (b Builder) sample(primary *Job, context []*Job) (Sample, error) {
	b = b.withDefaults()
	if len(context) > b.J-1 {
		panic("eventlog: more context jobs than J-1")
	}
	if len(context) < b.J-1 && !b.Pad {
		return Sample{}, fmt.Errorf("eventlog: job %v: %w: %d of %d", primary.Key, ErrTooFewJobs, len(context), b.J-1)
	}
	tl := makeTimeline(primary, b.E)
	hold, found := int64(0), false
	for k := range primary.Events {
		if primary.Events[k].Code == Held {
			hold, found = primary.Events[k].Time.UnixNano(), true
			break
		}
	}
	if b.SeedCompat && !found {
		return Sample{}, fmt.Errorf("eventlog: job %v: %w", primary.Key, ErrNoHold)
	}
	s := Sample{X: make([]float32, b.J*b.M*b.E), J: b.J, M: b.M, E: b.E, Label: primary.Label(), Job: primary.Key, contextJobs: make([]Key, b.J-1)}
	var start int64
	switch {
	case b.SeedCompat:
		start = hold
	case b.Forward:
		start = tl.first
	default:
		decision := hold
		if !found {
			decision = tl.last // a job not held: framed at its latest event
		}
		start = decision - int64(b.M-1)*int64(b.Frame)
	}
	s.Start = time.Unix(0, start)
	b.fill(&s, 0, &tl, hold, start)
	for k, c := range context {
		ctl := makeTimeline(c, b.E)
		s.contextJobs[k] = c.Key
		b.fill(&s, k+1, &ctl, hold, start)
	}
	return s, nil
}

// coexist finds the jobs alive in a window: those whose first event is at
// or before its end and whose last event is at or after its start. Jobs are
// split at the 99th percentile L of their lifetimes: a short-lived job can
// only qualify if it starts within L before the window, so a binary search
// bounds its scan; the few long-lived jobs are scanned in full. The result
// is exact and in a fixed order.
type coexist struct {
	maxShort                int64
	short, long             []int   // job indices by first time
	shortFirsts, longFirsts []int64 // their first times
}

func newCoexist(tls []timeline) *coexist {
	var lives []int64
	for i := range tls {
		if len(tls[i].t) > 0 {
			lives = append(lives, tls[i].last-tls[i].first)
		}
	}
	c := &coexist{}
	if len(lives) == 0 {
		return c
	}
	slices.Sort(lives)
	c.maxShort = lives[(len(lives)-1)*99/100]
	for i := range tls {
		if len(tls[i].t) == 0 {
			continue
		}
		if tls[i].last-tls[i].first <= c.maxShort {
			c.short = append(c.short, i)
		} else {
			c.long = append(c.long, i)
		}
	}
	byFirst := func(a, b int) int {
		switch {
		case tls[a].first < tls[b].first:
			return -1
		case tls[a].first > tls[b].first:
			return 1
		}
		return a - b
	}
	slices.SortFunc(c.short, byFirst)
	slices.SortFunc(c.long, byFirst)
	for _, i := range c.short {
		c.shortFirsts = append(c.shortFirsts, tls[i].first)
	}
	for _, i := range c.long {
		c.longFirsts = append(c.longFirsts, tls[i].first)
	}
	return c
}

// candidates appends to dst the jobs alive in [lo, hi] other than skip.
func (c *coexist) candidates(dst []int, tls []timeline, lo, hi int64, skip int) []int {
	a, _ := slices.BinarySearch(c.shortFirsts, lo-c.maxShort)
	b := sort.Search(len(c.shortFirsts), func(k int) bool { return c.shortFirsts[k] > hi })
	for _, i := range c.short[a:max(a, b)] {
		if i != skip && tls[i].last >= lo {
			dst = append(dst, i)
		}
	}
	e := sort.Search(len(c.longFirsts), func(k int) bool { return c.longFirsts[k] > hi })
	for _, i := range c.long[:e] {
		if i != skip && tls[i].last >= lo {
			dst = append(dst, i)
		}
	}
	return dst
}

// fill writes job j's rows of s from tl.
func (b Builder) fill(s *Sample, j int, tl *timeline, hold, start int64) {
	frame := int64(b.Frame)
	row := func(m, code int) {
		if code >= 0 {
			s.X[(j*b.M+m)*b.E+code] = 1
		}
	}
	if !b.SeedCompat {
		// Walk the timeline once: frames are increasing instants.
		k := 0
		state := -1
		for m := 0; m < b.M; m++ {
			at := start + int64(m)*frame
			for k < len(tl.t) && tl.t[k] <= at {
				state = int(tl.c[k])
				k++
			}
			row(m, state)
		}
		return
	}
	prev := -1
	for m := 0; m < b.M; m++ {
		hi := hold - int64(m)*frame // frame m is (hi-frame, hi]
		lo := hi - frame
		// Events in (lo, hi]: indices [a, c).
		a := sort.Search(len(tl.t), func(i int) bool { return tl.t[i] > lo })
		c := sort.Search(len(tl.t), func(i int) bool { return tl.t[i] > hi })
		code := -1
		switch {
		case a < c && m == 0:
			code = int(tl.c[a])
		case a < c:
			code = int(tl.c[c-1])
		default:
			code = prev
		}
		row(m, code)
		prev = code
	}
}
