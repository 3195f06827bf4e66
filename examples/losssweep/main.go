// Command losssweep runs the 216-run study end to end with package
// sweep: learning rate {0.05, 0.1, 0.2} × weight decay {1e-4, 1e-3, 1e-2} ×
// seeds 0–5 × variants {base, bn_off, narrow, adamw} of a small pure-Go
// network (50 epochs, validation every quarter epoch). It records every run
// in a SQLite ledger, runs them on the local machine or on Slurm, collects
// the results into a checksummed archive, checks completeness, exports the
// per-run dataset (CSV + metadata + trajectories), evaluates H1/H2 by
// variant and plots the curves. Run it again with the same -ledger and it
// resumes: finished runs are kept, the rest run.
//
//	go run ./examples/losssweep -out out/losssweep
//	go run ./examples/losssweep -out out/losssweep -backend slurm
//
// It exits with status 1 when any run failed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/crosscluster/crosscluster/sweep"
)

// studySpec is the grid, in the YAML form sweep.LoadSpec reads.
const studySpec = `
name: losssweep
base: {epochs: 50, batch_size: 32, hidden: 32, norm: batch, optimizer: sgd}
grid:
  - {key: lr, values: [0.05, 0.1, 0.2]}
  - {key: wd, values: [1e-4, 1e-3, 1e-2]}
  - {key: seed, short: s, values: [0, 1, 2, 3, 4, 5]}
variants:
  - {name: base}
  - {name: bn_off, set: {norm: none}}
  - {name: narrow, set: {hidden: 8}}
  - {name: adamw, set: {optimizer: adamw}}
`

// adamLRScale scales the grid's learning rate for AdamW, whose step size does
// not grow with the gradient as SGD's does; without it lr 0.2 diverges.
const adamLRScale = 0.1

func main() {
	out := flag.String("out", "out/losssweep", "output directory")
	backend := flag.String("backend", "local", "local or slurm")
	ledgerPath := flag.String("ledger", "", "ledger file (default <out>/ledger.db)")
	workers := flag.Int("workers", runtime.NumCPU(), "runs in flight (local) or array throttle (slurm)")
	specPath := flag.String("spec", "", "YAML spec (default: the built-in 216-run study)")
	epochs := flag.Int("epochs", 0, "override the epochs of every run (0: keep the spec's)")
	dry := flag.Bool("dry-run", false, "list the runs and exit")
	flag.Parse()

	// Under Slurm this program is also the worker.
	if t, ok, err := sweep.WorkerTask(); ok {
		if err != nil {
			fmt.Fprintln(os.Stderr, "losssweep worker:", err)
			os.Exit(2)
		}
		if err := worker(t); err != nil {
			fmt.Fprintln(os.Stderr, "losssweep worker:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx, config{out: *out, backend: *backend, ledger: *ledgerPath, workers: *workers, spec: *specPath, epochs: *epochs, dry: *dry}, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "losssweep:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

type config struct {
	out, backend, ledger, spec string
	workers, epochs            int
	dry                        bool
}

var (
	taskOnce sync.Once
	teach    *teacher
	validD   dataset
)

func hyperOf(p map[string]sweep.Value, epochsOverride int) hyper {
	hp := hyper{
		lr: p["lr"].Float(), wd: p["wd"].Float(), seed: uint64(p["seed"].Int()),
		hidden: int(p["hidden"].Int()), norm: p["norm"].String() == "batch",
		adamw: p["optimizer"].String() == "adamw", epochs: int(p["epochs"].Int()), batchSize: int(p["batch_size"].Int()),
	}
	if hp.adamw {
		hp.lr *= adamLRScale
	}
	if epochsOverride > 0 {
		hp.epochs = epochsOverride
	}
	return hp
}

func trainTask(ctx context.Context, t sweep.Task, epochsOverride int) (*sweep.Result, error) {
	taskOnce.Do(func() { teach, validD = makeTask() })
	hp := hyperOf(t.Params, epochsOverride)
	if hp.hidden <= 0 || hp.batchSize <= 0 || hp.batchSize > nTrain || hp.epochs <= 0 {
		return nil, fmt.Errorf("run %s: invalid hidden %d, batch_size %d or epochs %d", t.RunID, hp.hidden, hp.batchSize, hp.epochs)
	}
	ep, vl, tl, acc, err := train(ctx, hp, teach, validD)
	if err != nil {
		return nil, err
	}
	best := math.Inf(1)
	for _, v := range vl {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("run %s: validation loss %v: non-finite loss", t.RunID, v)
		}
		best = min(best, v)
	}
	return &sweep.Result{
		Metrics: map[string]float64{"best_val_loss": best, "final_val_loss": vl[len(vl)-1], "val_accuracy": acc},
		Curves:  map[string][]float64{"epoch": ep, "val_loss": vl, "train_loss": tl},
	}, nil
}

func worker(t sweep.Task) error {
	epochs := 0
	if s := os.Getenv("LOSSSWEEP_EPOCHS"); s != "" {
		fmt.Sscan(s, &epochs)
	}
	res, err := trainTask(context.Background(), t, epochs)
	if err != nil {
		return err
	}
	res.RunID, res.Attempt = t.RunID, t.Attempt
	return sweep.WriteResult(t.Dir, res)
}

// progress prints the controller's status lines, at most one a second plus
// the last one.
type progress struct {
	w    io.Writer
	last time.Time
	line string
}

func (p *progress) Write(b []byte) (int, error) {
	p.line = strings.TrimSpace(string(b))
	if time.Since(p.last) >= time.Second {
		p.last = time.Now()
		fmt.Fprintln(p.w, p.line)
	}
	return len(b), nil
}

func run(ctx context.Context, cfg config, stdout io.Writer) (int, error) {
	var spec *sweep.Spec
	var err error
	if cfg.spec != "" {
		f, err := os.Open(cfg.spec)
		if err != nil {
			return 0, err
		}
		spec, err = sweep.LoadSpec(f)
		f.Close()
		if err != nil {
			return 0, err
		}
	} else if spec, err = sweep.LoadSpec(strings.NewReader(studySpec)); err != nil {
		return 0, err
	}
	if cfg.dry {
		return 0, spec.DryRun(stdout)
	}
	pts, err := spec.Expand()
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return 0, err
	}
	out, err := filepath.Abs(cfg.out)
	if err != nil {
		return 0, err
	}
	if cfg.ledger == "" {
		cfg.ledger = filepath.Join(out, "ledger.db")
	}
	l, err := sweep.OpenLedger(cfg.ledger)
	if err != nil {
		return 0, err
	}
	defer l.Close()
	added, err := l.Enqueue(ctx, spec, pts)
	if err != nil {
		return 0, err
	}
	st, err := l.Status(ctx, cfg.workers)
	if err != nil {
		return 0, err
	}
	if added == len(pts) {
		fmt.Fprintf(stdout, "losssweep: %d runs enqueued in %s\n", added, cfg.ledger)
	} else {
		fmt.Fprintf(stdout, "losssweep: resuming %s: %d completed, %d failed, %d queued, %d running (%d new)\n",
			cfg.ledger, st.Counts[sweep.Completed], st.Counts[sweep.Failed], st.Counts[sweep.Queued], st.Counts[sweep.Running], added)
	}
	work := filepath.Join(out, "work")
	c := &sweep.Controller{Ledger: l, WorkDir: work, Parallel: cfg.workers, Progress: &progress{w: stdout}}
	switch cfg.backend {
	case "local":
		c.Backend = &sweep.Local{Func: func(ctx context.Context, t sweep.Task) (*sweep.Result, error) { return trainTask(ctx, t, cfg.epochs) }}
		c.PollInterval = 50 * time.Millisecond
	case "slurm":
		exe, err := os.Executable()
		if err != nil {
			return 0, err
		}
		cmd := []string{exe}
		if cfg.epochs > 0 {
			cmd = []string{"env", fmt.Sprintf("LOSSSWEEP_EPOCHS=%d", cfg.epochs), exe}
		}
		c.Backend = &sweep.Slurm{Command: cmd, Dir: filepath.Join(out, "slurm"), Name: "losssweep", MaxParallel: cfg.workers}
		c.Parallel = len(pts)
		c.PollInterval = 500 * time.Millisecond
	default:
		return 0, fmt.Errorf("unknown -backend %q (local or slurm)", cfg.backend)
	}
	start := time.Now()
	sum, err := c.Run(ctx)
	if p := c.Progress.(*progress); p.line != "" {
		fmt.Fprintln(stdout, p.line)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(stdout, "losssweep: interrupted; run again with the same -ledger to resume")
		}
		return 0, err
	}
	fmt.Fprintf(stdout, "losssweep: controller finished in %v: %d completed, %d failed, %d retried this invocation\n",
		time.Since(start).Round(time.Millisecond), sum.Completed, sum.Failed, sum.Retried)

	st, err = l.Status(ctx, cfg.workers)
	if err != nil {
		return 0, err
	}
	if err := st.WriteTable(stdout); err != nil {
		return 0, err
	}
	nFailed, err := sweep.WriteFailed(ctx, stdout, l, work, 5)
	if err != nil {
		return 0, err
	}

	// Collect, verify, check completeness.
	archive := filepath.Join(out, "archive")
	m, results, err := sweep.Collect(ctx, l, work, archive, time.Now())
	if err != nil {
		return 0, err
	}
	nv, err := sweep.VerifyArchive(archive)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(stdout, "archive: %d result files, checksums verified (%s)\n", nv, filepath.Join(archive, sweep.ManifestFile))
	comp, err := sweep.CheckCompleteness(ctx, l, work, pts)
	if err != nil {
		return 0, err
	}
	fmt.Fprintln(stdout, "completeness:", comp)
	_ = m

	// Dataset, export, schema check.
	runs, err := l.Runs(ctx, sweep.Completed)
	if err != nil {
		return 0, err
	}
	ccfg := sweep.DefaultCurves()
	ccfg.ParamColumns = []string{"lr", "wd", "seed", "optimizer", "hidden", "norm", "batch_size"}
	ccfg.ExtraMetrics = []string{"final_val_loss", "val_accuracy"}
	ds := sweep.CurveDataset(runs, results, ccfg)
	curves := map[string]map[string][]float64{}
	for _, r := range runs {
		curves[r.Slug] = results[r.ID].Curves
	}
	exportDir := filepath.Join(out, "export")
	if err := sweep.Export(exportDir, "losssweep", ds, curves, time.Now()); err != nil {
		return 0, err
	}
	f, err := os.Open(filepath.Join(exportDir, "losssweep.csv"))
	if err != nil {
		return 0, err
	}
	required := append([]string{"run_id", "slug", "variant"}, sweep.CurveColumns...)
	err = sweep.CheckSchema(f, required)
	f.Close()
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(stdout, "export: %s (%d rows, schema ok), trajectories in %s\n", filepath.Join(exportDir, "losssweep.csv"), len(ds.Rows), filepath.Join(exportDir, "losssweep_trajectories"))

	// Hypotheses.
	hyp := sweep.Hypotheses(ds, ccfg)
	var md strings.Builder
	if err := sweep.WriteHypotheses(&md, hyp, ccfg); err != nil {
		return 0, err
	}
	fmt.Fprint(stdout, md.String())
	if err := os.WriteFile(filepath.Join(out, "hypotheses.md"), []byte(md.String()), 0o644); err != nil {
		return 0, err
	}
	hj, _ := json.MarshalIndent(hypJSON(hyp), "", "  ")
	if err := os.WriteFile(filepath.Join(out, "hypotheses.json"), append(hj, '\n'), 0o644); err != nil {
		return 0, err
	}

	// Plots.
	png := filepath.Join(out, "curves.png")
	if err := plotCurves(png, runs, results); err != nil {
		return 0, err
	}
	fmt.Fprintln(stdout, "plot:", png)
	if nFailed > 0 || len(comp.Failed)+len(comp.NonFinite) > 0 {
		fmt.Fprintf(stdout, "losssweep: %d run(s) failed\n", nFailed)
		return 1, nil
	}
	return 0, nil
}

type hypRow struct {
	Group  string   `json:"group"`
	Runs   int      `json:"runs"`
	FracR2 float64  `json:"fraction_r2_ge_threshold"`
	H1     bool     `json:"h1"`
	Rho    *float64 `json:"spearman_rho"`
	P      *float64 `json:"p_value"`
	H2     bool     `json:"h2"`
}

func hypJSON(rows []sweep.HypothesisRow) []hypRow {
	var out []hypRow
	fin := func(x float64) *float64 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return &x
	}
	for _, r := range rows {
		out = append(out, hypRow{r.Group, r.N, r.FracR2, r.H1, fin(r.Rho), fin(r.P), r.H2})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Group == "all" && out[j].Group != "all" })
	return out
}
