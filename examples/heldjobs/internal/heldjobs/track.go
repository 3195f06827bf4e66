package heldjobs

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"time"

	"github.com/crosscluster/crosscluster/sweep"
)

// The tables Track writes (each as .csv, .jsonl and _metadata.json).
const (
	RunsTable   = "runs"
	EpochsTable = "epochs"
)

// runColumns are the runs table's columns after the identity and the
// point: metrics of the result, in this order.
var runMetricColumns = []struct {
	name string
	kind sweep.Kind
	doc  string
}{
	{"best_epoch", sweep.Int, "epoch whose weights the run kept (first with the best validation metric)"},
	{"epochs", sweep.Int, "epochs trained"},
	{"stopped", sweep.Int, "1 when early stopping ended the run"},
	{"seconds", sweep.Float, "wall-clock training time (s)"},
	{"cpu_seconds", sweep.Float, "CPU time of the worker process (s); empty for in-process workers"},
	{"peak_rss_bytes", sweep.Int, "peak resident memory of the worker process; empty for in-process workers"},
	{"valid_f1", sweep.Float, "validation F1 at the best epoch"},
	{"valid_precision", sweep.Float, "validation precision at the best epoch"},
	{"valid_recall", sweep.Float, "validation recall at the best epoch"},
	{"valid_accuracy", sweep.Float, "validation accuracy at the best epoch"},
	{"valid_roc_auc", sweep.Float, "validation ROC AUC at the best epoch"},
	{"valid_loss", sweep.Float, "validation BCE at the best epoch"},
	{"train_loss", sweep.Float, "training BCE of the best epoch"},
	{"test_f1", sweep.Float, "test F1 of the kept model"},
	{"test_f1_lo", sweep.Float, "2.5% percentile bootstrap bound of the test F1 (2000 resamples)"},
	{"test_f1_hi", sweep.Float, "97.5% percentile bootstrap bound of the test F1"},
	{"test_precision", sweep.Float, "test precision"},
	{"test_recall", sweep.Float, "test recall"},
	{"test_accuracy", sweep.Float, "test accuracy"},
	{"test_roc_auc", sweep.Float, "test ROC AUC"},
	{"test_loss", sweep.Float, "test BCE"},
	{"n_params", sweep.Int, "weights of the model"},
	{"model_bytes", sweep.Int, "bytes of the saved model directory"},
	{"train_n", sweep.Int, "training samples"},
	{"valid_n", sweep.Int, "validation samples"},
	{"test_n", sweep.Int, "test samples"},
}

// Tracking is what Track exported: the runs and every run's per-epoch
// series as the ledger holds them, by run id.
type Tracking struct {
	Runs   []RunRecord
	Best   int
	Series map[string]map[string]sweep.Series
}

// Track exports a search's runs from its ledger into dir: runs.csv and
// runs.jsonl (one row per run: identity, state and attempts, every
// parameter, timing, the validation and test metrics, the artifacts'
// paths) and epochs.csv and epochs.jsonl (one row per run and epoch: every
// per-epoch series the run streamed to the ledger, in long form), each
// with a _metadata.json giving the pandas dtypes (sweep.Export). pandas
// reads them with read_csv and read_json(lines=True).
func Track(ctx context.Context, l *sweep.Ledger, runs []RunRecord, best int, dir string) error {
	tr, err := tracking(ctx, l, runs, best)
	if err != nil {
		return err
	}
	now := time.Now()
	if err := sweep.Export(ctx, dir, RunsTable, runsTable(tr), sweep.ExportConfig{JSONL: true, Now: now}); err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	if err := sweep.Export(ctx, dir, EpochsTable, epochsTable(tr), sweep.ExportConfig{JSONL: true, Now: now}); err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	return nil
}

// ReadTracking reads the runs' series from the ledger, for plots.
func ReadTracking(ctx context.Context, l *sweep.Ledger, runs []RunRecord, best int) (*Tracking, error) {
	return tracking(ctx, l, runs, best)
}

func tracking(ctx context.Context, l *sweep.Ledger, runs []RunRecord, best int) (*Tracking, error) {
	tr := &Tracking{Runs: runs, Best: best, Series: map[string]map[string]sweep.Series{}}
	for _, r := range runs {
		ss, err := l.Series(ctx, r.ID)
		if err != nil {
			return nil, fmt.Errorf("heldjobs: run %s: %w", r.Slug, err)
		}
		tr.Series[r.ID] = ss
	}
	return tr, nil
}

func num(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

func runsTable(tr *Tracking) *sweep.Dataset {
	d := &sweep.Dataset{Columns: []sweep.Column{
		{Name: "run_id", Kind: sweep.String, Doc: "sweep run id (SHA-256 of the parameters)"},
		{Name: "slug", Kind: sweep.String},
		{Name: "state", Kind: sweep.String},
		{Name: "attempt", Kind: sweep.Int, Doc: "attempts started"},
		{Name: "best", Kind: sweep.Bool, Doc: "the run bestmodel.info names"},
		{Name: "shape", Kind: sweep.String},
		{Name: "j", Kind: sweep.Int}, {Name: "m", Kind: sweep.Int}, {Name: "frame_seconds", Kind: sweep.Float},
		{Name: "hidden", Kind: sweep.Int}, {Name: "layers", Kind: sweep.Int},
		{Name: "lr", Kind: sweep.Float}, {Name: "batch", Kind: sweep.Int},
		{Name: "max_epochs", Kind: sweep.Int}, {Name: "patience", Kind: sweep.Int},
		{Name: "metric", Kind: sweep.String}, {Name: "engine", Kind: sweep.String}, {Name: "seed", Kind: sweep.Int},
	}}
	for _, c := range runMetricColumns {
		d.Columns = append(d.Columns, sweep.Column{Name: c.name, Kind: c.kind, Doc: c.doc})
	}
	d.Columns = append(d.Columns,
		sweep.Column{Name: "result_dir", Kind: sweep.String, Doc: "directory of result.json and metrics.jsonl"},
		sweep.Column{Name: "model_dir", Kind: sweep.String, Doc: "the run's model directory (heldjobs.LoadModel)"},
		sweep.Column{Name: "error", Kind: sweep.String})
	for i, r := range tr.Runs {
		p := r.Point
		row := []any{r.ID, r.Slug, string(r.State), int64(r.Attempt), i == tr.Best, p.Shape.String(),
			int64(p.Shape.J), int64(p.Shape.M), p.Shape.Frame.Seconds(), int64(p.Hidden), int64(p.Layers), p.LearningRate, int64(p.Batch),
			r.Params["epochs"].Int(), r.Params["patience"].Int(), r.Params["metric"].Lit, r.Params["engine"].Lit, r.Params["seed"].Int()}
		for _, c := range runMetricColumns {
			v := num(r.metric(c.name))
			if f, ok := v.(float64); ok && c.kind == sweep.Int {
				v = int64(f)
			}
			row = append(row, v)
		}
		var res, model any
		if r.Result != nil {
			res, model = r.Dir, r.ModelDir
		}
		var errText any
		if r.Error != "" {
			errText = r.Error
		}
		d.Rows = append(d.Rows, append(row, res, model, errText))
	}
	return d
}

func epochsTable(tr *Tracking) *sweep.Dataset {
	names := seriesNames()
	d := &sweep.Dataset{Columns: []sweep.Column{
		{Name: "run_id", Kind: sweep.String}, {Name: "slug", Kind: sweep.String},
		{Name: "epoch", Kind: sweep.Int}, {Name: "best_run", Kind: sweep.Bool, Doc: "the run bestmodel.info names"},
		{Name: "kept", Kind: sweep.Bool, Doc: "this epoch's weights are the run's model"},
	}}
	for _, n := range names {
		d.Columns = append(d.Columns, sweep.Column{Name: n, Kind: sweep.Float})
	}
	for i, r := range tr.Runs {
		ss := tr.Series[r.ID]
		var steps []float64
		for _, n := range names {
			steps = append(steps, ss[n].Step...)
		}
		slices.Sort(steps)
		steps = slices.Compact(steps)
		kept := r.metric("best_epoch")
		for _, st := range steps {
			row := []any{r.ID, r.Slug, int64(st), i == tr.Best, st == kept}
			for _, n := range names {
				var v any
				s := ss[n]
				if k := slices.Index(s.Step, st); k >= 0 {
					v = num(s.Value[k])
				}
				row = append(row, v)
			}
			d.Rows = append(d.Rows, row)
		}
	}
	return d
}

// Curve is one run's validation curve of the search's metric.
type Curve struct {
	Slug         string
	Epoch, Value []float64
	Kept         int // the epoch whose weights the run kept
}

// ReadCurves reads, from the tree a Search or the DAG's cleanup node wrote
// in dir, every run's validation curve of the search's metric, in ledger
// order, and the index of the best run (bestmodel.json).
func ReadCurves(ctx context.Context, dir string) (curves []Curve, best int, m Metric, err error) {
	b, err := ReadBest(dir)
	if err != nil {
		return nil, -1, "", err
	}
	l, err := sweep.OpenLedgerReadOnly(filepath.Join(dir, LedgerFile))
	if err != nil {
		return nil, -1, "", fmt.Errorf("heldjobs: %w", err)
	}
	defer l.Close()
	sums, err := l.Summaries(ctx, sweep.Completed)
	if err != nil {
		return nil, -1, "", fmt.Errorf("heldjobs: %w", err)
	}
	best = -1
	for _, s := range sums {
		ss, err := l.Series(ctx, s.ID)
		if err != nil {
			return nil, -1, "", fmt.Errorf("heldjobs: %w", err)
		}
		ser := ss[b.Metric.Key()]
		if s.ID == b.RunID {
			best = len(curves)
		}
		curves = append(curves, Curve{Slug: s.Slug, Epoch: ser.Step, Value: ser.Value, Kept: int(s.Metrics["best_epoch"])})
	}
	if best < 0 {
		return nil, -1, "", fmt.Errorf("heldjobs: %w: the best run %s is not a completed run of %s", ErrNoRun, b.Slug, l.Path())
	}
	return curves, best, b.Metric, nil
}
