package dashboard

import (
	"cmp"
	"context"
	"fmt"
	"html/template"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/crosscluster/crosscluster/sweep"
)

// A snapshot is what the overview shows, read from the ledger once and
// shared by every request until the ledger changes: the runs with their
// latest values and the figures, which do not depend on the request.
type snapshot struct {
	stamp    stamp
	read     time.Time // when the read began
	status   sweep.Status
	name     string
	workDir  string
	runs     []sweep.RunSummary
	byID     map[string]int
	bySlug   map[string]int
	metric   string
	finals   []float64 // by run: the final metric, NaN when none
	ranked   []int     // runs with a final metric, best first
	pcols    []string  // parameters, sorted
	scols    []string  // series, sorted
	finished bool      // no run queued or running

	curves   template.HTML
	hist     template.HTML
	scatters []template.HTML
	failed   []failure // the most recent failures, with their log tails
	nFailed  int
	classes  []classCount
}

type failure struct {
	ID, Slug, Class, Error, Log string
}

type classCount struct {
	Class string
	N     int
}

const (
	// maxCurves is how many of the best runs' curves the overview draws.
	maxCurves = 20
	// maxFailures is how many failed runs' logs the overview shows.
	maxFailures = 10
	// quietFor: a snapshot is reused while the ledger's files are
	// unchanged, if they had not changed for this long when it was read
	// (a file's time stamps are coarser than its writes).
	quietFor = time.Second
)

// stamp identifies a ledger's state by its files' sizes and times: SQLite
// in WAL mode writes the -wal file on every commit and the main file at
// checkpoints.
type stamp struct {
	ok              bool
	size, walSize   int64
	mtime, walMtime int64
	newest          time.Time
}

func stampOf(path string) stamp {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}
	}
	s := stamp{ok: true, size: fi.Size(), mtime: fi.ModTime().UnixNano(), newest: fi.ModTime()}
	if wi, err := os.Stat(path + "-wal"); err == nil {
		s.walSize, s.walMtime = wi.Size(), wi.ModTime().UnixNano()
		if wi.ModTime().After(s.newest) {
			s.newest = wi.ModTime()
		}
	}
	return s
}

func (s stamp) same(o stamp) bool {
	return s.ok && o.ok && s.size == o.size && s.walSize == o.walSize && s.mtime == o.mtime && s.walMtime == o.walMtime
}

// reusable reports whether s still shows the ledger whose files now have
// stamp now.
func (s *snapshot) reusable(now stamp) bool {
	return s.stamp.same(now) && s.read.Sub(s.stamp.newest) > quietFor
}

// cache holds the latest snapshot and the load under way; concurrent
// requests share one load.
type cache struct {
	mu      sync.Mutex
	cur     *snapshot
	loading *load
}

type load struct {
	done chan struct{}
	s    *snapshot
	err  error
}

// loadTimeout bounds one read of the ledger, whoever waits for it.
const loadTimeout = 30 * time.Second

// snapshot returns a snapshot as recent as the ledger: the cached one when
// the ledger has not changed since, else the result of a load (one at a
// time; a request that arrives during a load waits for it).
func (d *dash) snapshot(ctx context.Context) (*snapshot, error) {
	now := stampOf(d.l.Path())
	d.c.mu.Lock()
	if s := d.c.cur; s != nil && s.reusable(now) {
		d.c.mu.Unlock()
		return s, nil
	}
	ld := d.c.loading
	if ld == nil {
		ld = &load{done: make(chan struct{})}
		d.c.loading = ld
		go func() {
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loadTimeout)
			defer cancel()
			ld.s, ld.err = d.load(lctx)
			d.c.mu.Lock()
			if ld.err == nil {
				d.c.cur = ld.s
			}
			d.c.loading = nil
			d.c.mu.Unlock()
			close(ld.done)
		}()
	}
	d.c.mu.Unlock()
	select {
	case <-ld.done:
		return ld.s, ld.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// load reads the ledger and builds what the overview shows.
func (d *dash) load(ctx context.Context) (*snapshot, error) {
	s := &snapshot{stamp: stampOf(d.l.Path()), read: time.Now()}
	var err error
	if s.status, err = d.l.Status(ctx, 1); err != nil {
		return nil, err
	}
	if s.name, err = d.l.Name(ctx); err != nil {
		return nil, err
	}
	if s.workDir, err = d.l.WorkDir(ctx); err != nil {
		return nil, err
	}
	if s.runs, err = d.l.Summaries(ctx); err != nil {
		return nil, err
	}
	s.finished = len(s.runs) > 0
	s.byID = make(map[string]int, len(s.runs))
	s.bySlug = make(map[string]int, len(s.runs))
	params, series := map[string]bool{}, map[string]bool{}
	for i := range s.runs {
		r := &s.runs[i]
		s.byID[r.ID] = i
		s.bySlug[r.Slug] = i
		if r.State == sweep.Queued || r.State == sweep.Running {
			s.finished = false
		}
		for k := range r.Params() {
			params[k] = true
		}
		for k := range r.Latest {
			series[k] = true
		}
	}
	s.pcols = slices.Sorted(maps.Keys(params))
	s.scols = slices.Sorted(maps.Keys(series))
	s.metric = d.opt.Metric
	if s.metric == "" && len(s.scols) > 0 {
		s.metric = s.scols[0]
	}
	s.finals = make([]float64, len(s.runs))
	for i := range s.runs {
		s.finals[i] = math.NaN()
		if v, ok := final(&s.runs[i], s.metric); ok {
			s.finals[i] = v
			s.ranked = append(s.ranked, i)
		}
	}
	slices.SortStableFunc(s.ranked, func(a, b int) int {
		c := cmp.Compare(s.finals[a], s.finals[b])
		if d.opt.HigherIsBetter {
			c = -c
		}
		return c
	})
	if err := d.figures(ctx, s); err != nil {
		return nil, err
	}
	if err := d.failures(ctx, s); err != nil {
		return nil, err
	}
	return s, nil
}

// final is a run's value of the ranking metric: its result's metric when
// completed, else the latest streamed value; NaN and ±Inf do not count.
func final(r *sweep.RunSummary, metric string) (float64, bool) {
	for _, m := range []map[string]float64{r.Metrics, r.Latest} {
		if v, ok := m[metric]; ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			return v, true
		}
	}
	return 0, false
}

func (d *dash) figures(ctx context.Context, s *snapshot) error {
	// The best runs' curves: the runs that streamed the metric, in rank.
	var streamed []int
	for _, i := range s.ranked {
		if _, ok := s.runs[i].Latest[s.metric]; ok {
			streamed = append(streamed, i)
		}
	}
	var curves []curve
	var drawn []*sweep.RunSummary
	for _, i := range streamed[:min(len(streamed), maxCurves)] {
		ser, err := d.l.Series(ctx, s.runs[i].ID)
		if err != nil {
			return err
		}
		if c, ok := ser[s.metric]; ok && len(c.Step) > 0 {
			curves = append(curves, curve{s.runs[i].Slug, c})
			drawn = append(drawn, &s.runs[i])
		}
	}
	if len(curves) > 0 {
		title := fmt.Sprintf("%s of all %d runs that streamed it, the best in black", s.metric, len(curves))
		if len(curves) < len(streamed) {
			title = fmt.Sprintf("%s of the %d best of %s runs that streamed it, the best in black", s.metric, len(curves), count(len(streamed)))
		}
		steps := make([]sweep.Series, len(curves))
		for i, c := range curves {
			steps[i] = c.s
		}
		s.curves = curvesSVG(curves, title, s.metric, d.stepName(drawn, steps))
	} else {
		s.curves = template.HTML(`<p class="empty">No ` + esc(s.metric) + ` values streamed yet.</p>`)
	}
	vals := make([]float64, 0, len(s.ranked))
	for _, i := range s.ranked {
		vals = append(vals, s.finals[i])
	}
	if len(vals) > 0 {
		title := fmt.Sprintf("final %s of %s runs", s.metric, count(len(vals)))
		if n := len(s.runs) - len(vals); n > 0 {
			title += fmt.Sprintf(" (%s without one)", count(n))
		}
		s.hist = histSVG(vals, vals[0], title, s.metric)
	}
	best := -1
	if len(s.ranked) > 0 {
		best = s.ranked[0]
	}
	for _, k := range s.pcols {
		var pts []point
		bi := -1
		for _, i := range s.ranked {
			v, ok := s.runs[i].Params()[k]
			if !ok || (v.Kind != sweep.Int && v.Kind != sweep.Float) {
				continue
			}
			if i == best {
				bi = len(pts)
			}
			pts = append(pts, point{v.Float(), s.finals[i], s.runs[i].State, s.runs[i].Slug})
		}
		if svg, ok := scatterSVG(pts, bi, k, s.metric); ok {
			s.scatters = append(s.scatters, svg)
		}
	}
	return nil
}

// stepName is the curves' x axis: "epoch" when
// every run drawn has an integer epochs parameter and its steps are whole
// numbers no larger, else "step".
func (d *dash) stepName(runs []*sweep.RunSummary, series []sweep.Series) string {
	for i, r := range runs {
		ep, ok := r.Params()["epochs"]
		if !ok || (ep.Kind != sweep.Int && ep.Kind != sweep.Float) {
			return "step"
		}
		for _, st := range series[i].Step {
			if st != math.Trunc(st) || st < 0 || st > ep.Float() {
				return "step"
			}
		}
	}
	if len(runs) == 0 {
		return "step"
	}
	return "epoch"
}

// failures keeps the most recently finished failed runs with their log
// tails, and counts the failures by class.
func (d *dash) failures(ctx context.Context, s *snapshot) error {
	var idx []int
	classes := map[string]int{}
	for i := range s.runs {
		if s.runs[i].State == sweep.Failed {
			idx = append(idx, i)
			classes[string(s.runs[i].ErrorClass)]++
		}
	}
	s.nFailed = len(idx)
	for _, k := range slices.Sorted(maps.Keys(classes)) {
		s.classes = append(s.classes, classCount{cmp.Or(k, "(none)"), classes[k]})
	}
	slices.SortStableFunc(s.classes, func(a, b classCount) int { return b.N - a.N })
	slices.SortStableFunc(idx, func(a, b int) int { return s.runs[b].FinishedAt.Compare(s.runs[a].FinishedAt) })
	for _, i := range idx[:min(len(idx), maxFailures)] {
		r := &s.runs[i]
		tail, err := d.logTail(s.workDir, r.ID, r.Attempt)
		switch {
		case err != nil:
			tail = "(no log: " + err.Error() + ")"
		case tail == "":
			tail = "(no log)"
		}
		s.failed = append(s.failed, failure{r.ID, r.Slug, string(r.ErrorClass), r.ErrorText, tail})
	}
	return ctx.Err()
}

// count formats n with thousands separators.
func count(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
