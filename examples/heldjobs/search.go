package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/examples/heldjobs/internal/heldjobs"
	"github.com/crosscluster/crosscluster/lstm"
	"github.com/crosscluster/crosscluster/sweep"
)

// shape is one way of building the tensors: j jobs per sample, m frames of
// the given length ("4x10x60s" in the sweep spec and in -search-shapes).
type shape = heldjobs.Shape

// prepared is the data of one tensor shape: the labelled held jobs split
// 60/20/20 and the jobs still on hold.
type prepared struct {
	shape              shape
	held, labelled     int
	train, valid, test lstm.Data
	onHold             []eventlog.Sample
	// The hold reason codes of the training and test samples' first
	// holds (0 when the event has none), for the hold-code baseline.
	trainCodes, testCodes []int
}

// dataset builds each tensor shape's data from the grouped jobs once, on
// first use; trials running at the same time share it read-only.
type dataset struct {
	o    options
	jobs []*eventlog.Job
	w    io.Writer

	mu     sync.Mutex
	shapes map[shape]*shapeEntry
}

type shapeEntry struct {
	once sync.Once
	p    *prepared
	err  error
}

func newDataset(o options, jobs []*eventlog.Job, w io.Writer) *dataset {
	return &dataset{o: o, jobs: jobs, w: w, shapes: map[shape]*shapeEntry{}}
}

func (d *dataset) prepare(s shape) (*prepared, error) {
	d.mu.Lock()
	e := d.shapes[s]
	if e == nil {
		e = &shapeEntry{}
		d.shapes[s] = e
	}
	d.mu.Unlock()
	e.once.Do(func() { e.p, e.err = d.build(s) })
	return e.p, e.err
}

func (d *dataset) build(s shape) (*prepared, error) {
	o := d.o
	// The window that ends at the first hold holds only what was known when
	// the hold decision had to be made; rows come newest first.
	b := eventlog.Builder{E: o.e, M: s.M, Frame: s.Frame, J: s.J, Seed: o.seed, Pad: true, Unlabeled: true, SeedCompat: !o.forward, Forward: o.forward}
	samples, err := b.Build(d.jobs)
	if err != nil {
		return nil, fmt.Errorf("building %s tensors: %w", s, err)
	}
	byKey := map[eventlog.Key]*eventlog.Job{}
	for _, j := range d.jobs {
		byKey[j.Key] = j
	}
	p := &prepared{shape: s, held: len(samples)}
	var labelled []eventlog.Sample
	for _, smp := range samples {
		switch {
		case smp.Label != eventlog.Unlabeled:
			labelled = append(labelled, smp)
		case o.forward && stillHeld(byKey[smp.Job]):
			p.onHold = append(p.onHold, smp)
		}
	}
	if !o.forward {
		// Jobs on hold are decided at the hold they are in now, as
		// heldjobs.Decide does (training samples are framed at the first).
		if p.onHold, err = b.BuildOnHold(d.jobs); err != nil {
			return nil, fmt.Errorf("building %s tensors: %w", s, err)
		}
	}
	p.labelled = len(labelled)
	if len(labelled) < 10 {
		if o.logs != "" {
			return nil, fmt.Errorf("the logs hold only %d labelled held jobs (held, then released or removed); at least 10 are needed: give more or longer -logs", len(labelled))
		}
		return nil, fmt.Errorf("the synthetic log holds only %d labelled held jobs; at least 10 are needed: use more -jobs", len(labelled))
	}
	codes, at := make([]int, len(labelled)), make([]int64, len(labelled))
	for i, smp := range labelled {
		for _, h := range byKey[smp.Job].Holds()[:1] {
			codes[i], at[i] = h.Code, h.Held.UnixNano()
		}
	}
	tr, va, te := eventlog.Split(len(labelled), o.seed, 0.6, 0.2)
	if o.timeSplit() {
		// Train on the first holds, validate on the next, test on the
		// latest: no job's future informs the training on its past.
		order := timeOrder(at)
		tr, va, te = order[:len(tr)], order[len(tr):len(tr)+len(va)], order[len(tr)+len(va):]
	}
	p.train, p.valid, p.test = toData(labelled, tr), toData(labelled, va), toData(labelled, te)
	for _, i := range tr {
		p.trainCodes = append(p.trainCodes, codes[i])
	}
	for _, i := range te {
		p.testCodes = append(p.testCodes, codes[i])
	}
	fmt.Fprintf(d.w, "%d held jobs: %d labelled (release/remove), %d still on hold; tensors %d frames × %d jobs × %d events (frame %s)\n"+
		"split (%s): %d train, %d validation, %d test\n",
		p.held, p.labelled, len(p.onHold), s.M, s.J, o.e, s.Frame, o.splitName(), p.train.Len(), p.valid.Len(), p.test.Len())
	return p, nil
}

// syncWriter serialises the lines of trials running at the same time.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// The keys of a trial's parameters in the sweep spec: the pipeline's.
const (
	keyShape  = heldjobs.ParamShape
	keyHidden = heldjobs.ParamHidden
	keyLayers = heldjobs.ParamLayers
	keyLR     = heldjobs.ParamLR
	keyBatch  = heldjobs.ParamBatch
)

// modelFile is the trained model each trial leaves in its attempt
// directory, beside the sweep's result.json.
const modelFile = "model.json"

// searchSpec is the sweep of the hyperparameter search. Its base
// parameters are everything else that decides a trial's outcome (the data,
// the seed, the training budget), so that a change to any of them makes new
// runs instead of reusing old results; the axes (or, with -search-random,
// the sampled parameters) are the tensor shape, hidden size, layers,
// learning rate and batch size.
func searchSpec(o options) (*sweep.Spec, error) {
	if o.searchShapes == "" {
		o.searchShapes = defaultShapes(o)
	}
	lists := []struct {
		key, short, flag, text string
		check                  func(sweep.Value) bool
	}{
		{keyShape, "s", "-search-shapes", o.searchShapes, func(v sweep.Value) bool { _, err := heldjobs.ParseShape(v.Lit); return err == nil }},
		{keyHidden, "h", "-search-hidden", o.searchHidden, func(v sweep.Value) bool { return v.Kind == sweep.Int && v.Int() > 0 }},
		{keyLayers, "l", "-search-layers", o.searchLayers, func(v sweep.Value) bool { return v.Kind == sweep.Int && v.Int() > 0 }},
		{keyLR, "lr", "-search-lr", o.searchLR, func(v sweep.Value) bool {
			return (v.Kind == sweep.Float || v.Kind == sweep.Int) && v.Float() > 0 && !math.IsInf(v.Float(), 0)
		}},
		{keyBatch, "b", "-search-batch", o.searchBatch, func(v sweep.Value) bool { return v.Kind == sweep.Int && v.Int() > 0 }},
	}
	spec := &sweep.Spec{Name: "heldjobs-search", Base: dataParams(o)}
	var dists []sweep.Dist
	for _, l := range lists {
		var vals []sweep.Value
		for f := range strings.SplitSeq(l.text, ",") {
			f = strings.TrimSpace(f)
			v := sweep.ParseValue(f)
			if l.key == keyShape {
				v = sweep.ValueOf(f)
			}
			if !l.check(v) {
				return nil, fmt.Errorf("%s: bad value %q", l.flag, f)
			}
			vals = append(vals, v)
		}
		if o.searchRandom > 0 {
			dists = append(dists, sweep.Dist{Key: l.key, Short: l.short, Choice: vals})
		} else {
			spec.Axes = append(spec.Axes, sweep.Axis{Key: l.key, Short: l.short, Values: vals})
		}
	}
	if o.searchRandom > 0 {
		spec.Samples = &sweep.Samples{Count: o.searchRandom, Seed: o.seed, Dists: dists}
	}
	return spec, nil
}

// dataParams are the parameters every trial shares.
func dataParams(o options) map[string]sweep.Value {
	p := map[string]sweep.Value{
		"seed": sweep.ValueOf(int64(o.seed)), "e": sweep.ValueOf(int64(o.e)), "forward": sweep.ValueOf(o.forward),
		"epochs": sweep.ValueOf(int64(o.epochs)), "patience": sweep.ValueOf(int64(o.patience)),
		"threshold": sweep.ValueOf(o.threshold), "engine": sweep.ValueOf(o.engine),
	}
	if o.timeSplit() {
		p["split"] = sweep.ValueOf("time") // absent for the random split: those trials keep their identities
	}
	if o.cell != "" && o.cell != lstm.LSTM.String() {
		p["model"] = sweep.ValueOf(o.cell) // absent for the LSTM: its trials keep their identities
	}
	if o.logs != "" {
		p["logs"] = sweep.ValueOf(o.logs)
	} else {
		p["jobs"], p["snapshot"] = sweep.ValueOf(int64(o.jobs)), sweep.ValueOf(o.snapshot)
	}
	return p
}

// trialParams is one trial's point of the search.
type trialParams struct {
	shape          shape
	hidden, layers int
	lr             float64
	batch          int
}

func paramsOf(p map[string]sweep.Value) (trialParams, error) {
	s, err := heldjobs.ParseShape(p[keyShape].Lit)
	if err != nil {
		return trialParams{}, err
	}
	return trialParams{shape: s, hidden: int(p[keyHidden].Int()), layers: int(p[keyLayers].Int()),
		lr: p[keyLR].Float(), batch: int(p[keyBatch].Int())}, nil
}

// searcher runs the trials: sweep.Local calls trial in a goroutine for each
// run the controller starts.
type searcher struct {
	o   options
	cfg lstm.Config
	ds  *dataset
	w   io.Writer
	ran atomic.Int64 // trials trained by this invocation
}

// trial builds the tensors of the run's shape (once per shape), trains
// with lstm.Train and returns the validation metrics at the best epoch and
// the per-epoch curves as the run's result; the trained model goes to the
// attempt directory.
func (s *searcher) trial(ctx context.Context, t sweep.Task) (*sweep.Result, error) {
	tp, err := paramsOf(t.Params)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", t.Slug, err)
	}
	data, err := s.ds.prepare(tp.shape)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", t.Slug, err)
	}
	s.ran.Add(1)
	cfg := s.cfg
	cfg.LearningRate, cfg.BatchSize = tp.lr, tp.batch
	arch := lstm.Architecture{Inputs: tp.shape.J * s.o.e, Hidden: tp.hidden, Layers: tp.layers, NewestFirst: !s.o.forward, Cell: cellFlag(s.o.cell)}
	// The same seeds as a run without -search, so the best trial is the
	// model that run would train with the trial's flags.
	m := lstm.New(arch, rand.New(rand.NewPCG(s.o.seed, 2)))
	t0 := time.Now()
	hist, err := lstm.Train(ctx, m, cfg, data.train, data.valid)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", t.Slug, err)
	}
	secs := time.Since(t0).Seconds()
	if hist.BestEpoch < 1 {
		return nil, fmt.Errorf("run %s: no epoch finished", t.Slug)
	}
	if err := writeFile(filepath.Join(t.Dir, modelFile), func(w *bytes.Buffer) error { return m.Save(w) }); err != nil {
		return nil, err
	}
	best := hist.Epochs[hist.BestEpoch-1]
	res := &sweep.Result{
		Metrics: map[string]float64{
			"valid_f1": best.Valid.F1, "valid_loss": best.ValidLoss, "valid_accuracy": best.Valid.Accuracy,
			"valid_precision": best.Valid.Precision, "valid_recall": best.Valid.Recall,
			"best_epoch": float64(hist.BestEpoch), "epochs": float64(len(hist.Epochs)), "stopped": b2f(hist.Stopped),
			"seconds": secs, "train_n": float64(data.train.Len()), "valid_n": float64(data.valid.Len()),
		},
		Curves: map[string][]float64{},
	}
	for _, e := range hist.Epochs {
		for k, v := range map[string]float64{
			"epoch": float64(e.Epoch), "train_loss": e.TrainLoss, "valid_loss": e.ValidLoss, "train_f1": e.Train.F1,
			"valid_f1": e.Valid.F1, "valid_precision": e.Valid.Precision, "valid_recall": e.Valid.Recall, "best": b2f(e.Best),
		} {
			res.Curves[k] = append(res.Curves[k], v)
		}
	}
	fmt.Fprintf(s.w, "trial %s: validation F1 %.4f, loss %.4f (%d epochs, best %d, %.1fs)\n",
		t.Slug, best.Valid.F1, best.ValidLoss, len(hist.Epochs), hist.BestEpoch, secs)
	return res, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// trialRow is one trial of the search as the ledger and its result file
// record it.
type trialRow struct {
	point  sweep.Point
	params trialParams
	run    sweep.Run
	dir    string        // the attempt directory
	res    *sweep.Result // nil unless completed with a readable result
}

func (r *trialRow) metric(k string) float64 {
	if r.res == nil {
		return math.NaN()
	}
	if v, ok := r.res.Metrics[k]; ok {
		return v
	}
	return math.NaN()
}

// searchOutcome is what the search chose, ready for the rest of the
// example.
type searchOutcome struct {
	rows    []*trialRow
	best    int // index into rows
	dir     string
	ran     int // trials trained by this invocation
	model   *lstm.Model
	hist    *lstm.History
	data    *prepared
	summary map[string]any
}

// runSearch runs the search as a sweep: one run per trial in a ledger under
// -out, executed by the Local backend with searcher.trial; w must be safe
// for concurrent trials (ds.w is a syncWriter). A second
// invocation with the same data and flags finds every trial completed in
// the ledger and trains none of them again.
func runSearch(ctx context.Context, o options, cfg lstm.Config, ds *dataset, w io.Writer) (*searchOutcome, error) {
	spec, err := searchSpec(o)
	if err != nil {
		return nil, err
	}
	all, err := spec.Expand()
	if err != nil {
		return nil, err
	}
	// Random draws may repeat a point; a point is one run.
	var pts []sweep.Point
	seen := map[string]bool{}
	for _, p := range all {
		if !seen[p.ID] {
			seen[p.ID] = true
			pts = append(pts, p)
		}
	}
	// One ledger per data configuration: the ledger runs every queued run
	// it holds, and a run is only meaningful on the data it was made for.
	out, err := filepath.Abs(o.out)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(out, "search", sweep.Identity(spec.Base)[:12])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	l, err := sweep.OpenLedger(filepath.Join(dir, "ledger.db"))
	if err != nil {
		return nil, err
	}
	defer l.Close()
	added, err := l.Enqueue(ctx, spec, slices.Values(pts))
	if err != nil {
		return nil, err
	}
	mode := "grid"
	if o.searchRandom > 0 {
		mode = fmt.Sprintf("%d seeded random draws", o.searchRandom)
	}
	fmt.Fprintf(w, "search (%s): %d trials, %d new, %d already in %s\n", mode, len(pts), added, len(pts)-added, l.Path())

	s := &searcher{o: o, cfg: cfg, ds: ds, w: ds.w}
	s.cfg.Progress = nil
	work := filepath.Join(dir, "work")
	c := &sweep.Controller{
		Ledger: l, WorkDir: work, Parallel: max(o.workers, 1),
		Backend:      &sweep.Local{Func: s.trial},
		PollInterval: 50 * time.Millisecond,
		// A trial fails the same way every time on the same data; only a
		// run lost with an interrupted or crashed invocation is worth
		// another attempt. Runs in flight at an interrupt stay "running" in
		// the ledger; the next invocation finds them lost and retries them.
		Retry: map[sweep.Class]int{sweep.ClassInfrastructure: 5},
	}
	start := time.Now()
	sum, err := c.Run(ctx)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(w, "search interrupted; run again with the same -out to resume")
		}
		return nil, err
	}
	so := &searchOutcome{dir: dir, ran: int(s.ran.Load()), best: -1}
	fmt.Fprintf(w, "search: trained %d trials in %s (%d completed, %d failed this time)\n",
		so.ran, time.Since(start).Round(time.Millisecond), sum.Completed, sum.Failed)

	for _, p := range pts {
		run, err := l.Get(ctx, p.ID)
		if err != nil {
			return nil, err
		}
		tp, err := paramsOf(p.Params)
		if err != nil {
			return nil, err
		}
		r := &trialRow{point: p, params: tp, run: run, dir: sweep.AttemptDir(work, p.ID, run.Attempt)}
		if run.State == sweep.Completed {
			if r.res, err = sweep.ReadResult(r.dir); err != nil {
				return nil, err
			}
		}
		so.rows = append(so.rows, r)
	}
	so.best = bestTrial(so.rows)
	if err := writeTrials(filepath.Join(o.out, "search.csv"), so.rows, so.best); err != nil {
		return nil, err
	}
	printTrials(w, so.rows, so.best)
	if so.best < 0 {
		return nil, errors.New("every search trial failed")
	}
	b := so.rows[so.best]
	fmt.Fprintf(w, "search: best %s (validation F1 %.4f, loss %.4f) -> search.csv\n", b.point.Slug, b.metric("valid_f1"), b.metric("valid_loss"))
	f, err := os.Open(filepath.Join(b.dir, modelFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if so.model, err = lstm.Load(f); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	if so.hist, err = historyOf(b.res); err != nil {
		return nil, fmt.Errorf("run %s: %w", b.point.Slug, err)
	}
	if so.data, err = ds.prepare(b.params.shape); err != nil {
		return nil, err
	}
	completed, failed := 0, 0
	for _, r := range so.rows {
		switch r.run.State {
		case sweep.Completed:
			completed++
		case sweep.Failed:
			failed++
		}
	}
	so.summary = map[string]any{
		"ledger": l.Path(), "mode": mode, "trials": len(so.rows), "completed": completed, "failed": failed,
		"trained_this_invocation": so.ran, "from_ledger": len(so.rows) - so.ran,
		"best": map[string]any{"run_id": b.point.ID, "slug": b.point.Slug, "shape": b.params.shape.String(),
			"hidden": b.params.hidden, "layers": b.params.layers, "learning_rate": b.params.lr, "batch": b.params.batch,
			"valid_f1": b.metric("valid_f1"), "valid_loss": b.metric("valid_loss")},
	}
	return so, nil
}

// bestTrial is the completed trial with the highest validation F1, the
// lower validation loss on ties, then the first; -1 when none completed.
func bestTrial(rows []*trialRow) int {
	best := -1
	for i, r := range rows {
		f1, loss := r.metric("valid_f1"), r.metric("valid_loss")
		if math.IsNaN(f1) {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		bf1, bloss := rows[best].metric("valid_f1"), rows[best].metric("valid_loss")
		if f1 > bf1 || f1 == bf1 && loss < bloss {
			best = i
		}
	}
	return best
}

// historyOf rebuilds the training history of a trial from its result's
// curves, for history.csv and loss.png.
func historyOf(r *sweep.Result) (*lstm.History, error) {
	c := r.Curves
	n := len(c["epoch"])
	for _, k := range []string{"train_loss", "valid_loss", "train_f1", "valid_f1", "valid_precision", "valid_recall", "best"} {
		if len(c[k]) != n {
			return nil, fmt.Errorf("result curve %q has %d points, epoch has %d", k, len(c[k]), n)
		}
	}
	h := &lstm.History{BestEpoch: int(r.Metrics["best_epoch"]), Stopped: r.Metrics["stopped"] == 1}
	if h.BestEpoch < 1 || h.BestEpoch > n {
		return nil, fmt.Errorf("result best_epoch %v outside 1..%d", r.Metrics["best_epoch"], n)
	}
	for i := range n {
		h.Epochs = append(h.Epochs, lstm.EpochStats{
			Epoch: int(c["epoch"][i]), TrainLoss: c["train_loss"][i], ValidLoss: c["valid_loss"][i],
			Train: lstm.Metrics{F1: c["train_f1"][i]},
			Valid: lstm.Metrics{F1: c["valid_f1"][i], Precision: c["valid_precision"][i], Recall: c["valid_recall"][i]},
			Best:  c["best"][i] == 1,
		})
	}
	return h, nil
}

var trialColumns = []string{"run_id", "slug", "state", "attempt", "shape", "j", "m", "frame_seconds", "hidden", "layers",
	"learning_rate", "batch", "epochs", "best_epoch", "valid_f1", "valid_loss", "valid_accuracy", "valid_precision",
	"valid_recall", "seconds", "best", "error"}

// writeTrials writes search.csv: one row per trial in the spec's order.
func writeTrials(path string, rows []*trialRow, best int) error {
	return writeFile(path, func(b *bytes.Buffer) error {
		w := csv.NewWriter(b)
		w.Write(trialColumns)
		f := func(v float64) string {
			if math.IsNaN(v) {
				return ""
			}
			return strconv.FormatFloat(v, 'f', 6, 64)
		}
		i := func(v float64) string {
			if math.IsNaN(v) {
				return ""
			}
			return strconv.Itoa(int(v))
		}
		for k, r := range rows {
			p := r.params
			w.Write([]string{r.point.ID, r.point.Slug, string(r.run.State), strconv.Itoa(r.run.Attempt), p.shape.String(),
				strconv.Itoa(p.shape.J), strconv.Itoa(p.shape.M), strconv.FormatFloat(p.shape.Frame.Seconds(), 'g', -1, 64),
				strconv.Itoa(p.hidden), strconv.Itoa(p.layers), strconv.FormatFloat(p.lr, 'g', -1, 64), strconv.Itoa(p.batch),
				i(r.metric("epochs")), i(r.metric("best_epoch")), f(r.metric("valid_f1")), f(r.metric("valid_loss")),
				f(r.metric("valid_accuracy")), f(r.metric("valid_precision")), f(r.metric("valid_recall")), f(r.metric("seconds")),
				strconv.FormatBool(k == best), r.run.ErrorText})
		}
		w.Flush()
		return w.Error()
	})
}

// printTrials prints the trials sorted by validation F1, best first.
func printTrials(w io.Writer, rows []*trialRow, best int) {
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		fa, fb := rows[a].metric("valid_f1"), rows[b].metric("valid_f1")
		switch {
		case math.IsNaN(fa) && math.IsNaN(fb):
			return 0
		case math.IsNaN(fa):
			return 1
		case math.IsNaN(fb):
			return -1
		case fa != fb:
			if fa > fb {
				return -1
			}
			return 1
		}
		la, lb := rows[a].metric("valid_loss"), rows[b].metric("valid_loss")
		if la < lb {
			return -1
		} else if la > lb {
			return 1
		}
		return 0
	})
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tshape\thidden\tlayers\tlr\tbatch\tepochs\tbest\tvalid F1\tvalid loss\tseconds\tstate\t")
	for _, k := range order {
		r := rows[k]
		mark := ""
		if k == best {
			mark = "*"
		}
		p := r.params
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%g\t%d\t%.0f\t%.0f\t%.4f\t%.4f\t%.1f\t%s\t\n", mark, p.shape, p.hidden, p.layers, p.lr, p.batch,
			r.metric("epochs"), r.metric("best_epoch"), r.metric("valid_f1"), r.metric("valid_loss"), r.metric("seconds"), r.run.State)
	}
	tw.Flush()
}
