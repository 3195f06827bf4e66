// Command heldjobs is the held-job workflow end to end: HTCondor event logs
// to one-hot tensors, an LSTM trained with early stopping, test metrics and
// a confusion matrix, the saved model, and a release/remove decision for
// every job still on hold.
//
// By default it generates a synthetic schedd-wide global event log with
// internal/synth; -logs reads real logs instead (rotated sets are sorted and
// de-duplicated at the file boundaries). The default sizes are small so the
// run takes well under a minute; -published sets the published model and
// tensor sizes (j=10, m=10, e=46, H=64, 2 layers, batch 256). In the
// synthetic log a held job's outcome shows, noisily, in its events before
// the first hold (jobs that will be removed mostly fail short runs first),
// so the default run learns it: test F1 about 0.86 (docs/heldjobs.md).
//
// -search first runs a hyperparameter search over the tensor shape (j, m,
// frame), hidden size, layers, learning rate and batch size as a sweep:
// each trial is a run of package sweep, executed in-process by its Local
// backend and recorded in a ledger under -out, so a second invocation
// resumes instead of repeating trials. The example then continues with the
// model of the trial with the highest validation F1 (search.go).
//
// -spec FILE runs the held-job pipeline of package heldjobs instead: the
// search of a YAML spec on -backend local (this process), process (worker
// processes), slurm (job arrays) or condor (an HTCondor DAG written into
// -out/condor; condor-local also runs it here), leaving in -out the
// dataset, the ledger, bestmodel.info and bestmodel.json, the best model
// directory, the tracking tables and curves.png (pipeline.go); -dashboard
// ADDR serves the live dashboard of a local, process or Slurm search
// while it runs. -model DIR
// with -logs decides every job on hold in the logs with a saved model and
// writes -out/decisions.csv. "heldjobs serve -model DIR -log PATH
// -decisions FILE [-act [-dry-run]]" follows a live log and decides each
// job when it enters a hold, once per hold across restarts (serve.go).
// "heldjobs node ..." is the command line of the DAG's jobs and of the
// process and Slurm workers.
//
// Outputs in -out: model.json (lstm.Save), model_torch.npz (PyTorch
// state_dict), decisions.csv, history.csv, loss.png, metrics.json, for
// synthetic runs the generated global.log, and with -search search.csv and
// the sweep's ledger and run directories under search/.
package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/examples/heldjobs/internal/heldjobs"
	"github.com/crosscluster/crosscluster/internal/pathlist"
	cplot "github.com/crosscluster/crosscluster/internal/plot"
	"github.com/crosscluster/crosscluster/internal/synth"
	"github.com/crosscluster/crosscluster/lstm"
	"github.com/crosscluster/crosscluster/lstm/gorgonia"
)

type options struct {
	out       string
	logs      string
	jobs      int
	seed      uint64
	j, m, e   int
	frame     time.Duration
	hidden    int
	layers    int
	batch     int
	epochs    int
	patience  int
	lr        float64
	threshold float64
	search    bool
	// The search space: comma-separated values of each axis.
	searchShapes, searchHidden, searchLayers, searchLR, searchBatch string
	searchRandom                                                    int
	workers                                                         int
	snapshot                                                        float64
	forward                                                         bool
	published                                                       bool
	engine                                                          string
	cell                                                            string
	split                                                           string // "random", "time" or "" (time for -logs, random otherwise)
	// The pipeline (pipeline.go).
	spec, backend, model string
	dashboard            string // with -spec: serve sweep/dashboard at this address during the search
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := serveMain(ctx, os.Args[2:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	if len(os.Args) > 1 && os.Args[1] == "node" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := nodeMain(ctx, os.Args[2:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if err == flag.ErrHelp {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, errorLine(err))
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	switch {
	case o.model != "":
		err = runDecide(o, os.Stdout)
	case o.spec != "":
		err = runSpec(ctx, o, os.Stdout)
	default:
		err = run(ctx, o)
	}
	code := exitCode(ctx, err, os.Stderr) // before stop, which cancels ctx
	stop()
	os.Exit(code)
}

// exitCode prints err on one line and returns the exit status: 0 without
// an error, 130 (as a shell reports SIGINT) when the run was interrupted,
// 1 otherwise.
func exitCode(ctx context.Context, err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return 0
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "heldjobs: interrupted; rerun the same command to resume where a search or ledger keeps state")
		return 130
	}
	fmt.Fprintln(stderr, errorLine(err))
	return 1
}

// parseFlags reads the command line and refuses, before any work, values
// that are out of range, stray positional arguments and flags that need
// another (-model without -logs). Usage and errors go to stderr.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	flag := flag.NewFlagSet("heldjobs", flag.ContinueOnError)
	flag.SetOutput(stderr)
	flag.StringVar(&o.out, "out", "out/heldjobs", "directory for the outputs (e.g. -out /tmp/hj)")
	flag.StringVar(&o.logs, "logs", "", "comma-separated HTCondor event log files (default: a synthetic global log); a path holding a comma is read whole when given alone (e.g. -logs EventLog.1,EventLog)")
	flag.IntVar(&o.jobs, "jobs", 20000, "jobs in the synthetic log (e.g. -jobs 5000)")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic log, the split, the weights and the batches (e.g. -seed 7)")
	flag.IntVar(&o.j, "j", 4, "jobs per sample (the held job and j-1 co-existing ones) (e.g. -j 10)")
	flag.IntVar(&o.m, "m", 10, "frames per sample (time steps) (e.g. -m 20)")
	flag.IntVar(&o.e, "e", eventlog.DefaultE, "event types (one-hot width per job) (e.g. -e 46)")
	flag.DurationVar(&o.frame, "frame", 60*time.Second, "frame length (e.g. -frame 30s)")
	flag.IntVar(&o.hidden, "hidden", 32, "LSTM hidden units (e.g. -hidden 64)")
	flag.IntVar(&o.layers, "layers", 2, "LSTM layers (e.g. -layers 1)")
	flag.IntVar(&o.batch, "batch", 64, "mini-batch size (e.g. -batch 256)")
	flag.IntVar(&o.epochs, "epochs", 40, "maximum epochs (e.g. -epochs 100)")
	flag.IntVar(&o.patience, "patience", 8, "early-stopping patience in epochs (on validation F1) (e.g. -patience -1)")
	flag.Float64Var(&o.lr, "lr", 3e-3, "Adam learning rate (e.g. -lr 1e-3)")
	flag.Float64Var(&o.threshold, "threshold", 0.5, "release when P(release) is at least this (e.g. -threshold 0.7)")
	flag.Float64Var(&o.snapshot, "snapshot", 0.9, "for the synthetic log: cut it at the time of this quantile of its events, a snapshot in which some jobs are still on hold (e.g. -snapshot 0.8)")
	flag.BoolVar(&o.forward, "forward", false, "frame forward from each job's first event (eventlog.Builder's Forward mode, which leaks the label: see docs/eventlog.md) instead of the window ending at the first hold, newest frame first (the published pipeline's framing, SeedCompat) (e.g. -forward)")
	flag.BoolVar(&o.search, "search", false, "run a hyperparameter search as a sweep (ledger under -out; a rerun resumes) and continue with its best trial's model (e.g. -search)")
	flag.StringVar(&o.searchShapes, "search-shapes", "", "tensor shapes JxMxFRAME to search, comma-separated (default: the -j -m -frame shape and the same window in half as many frames twice as long) (e.g. -search-shapes 4x10x60s,4x5x120s)")
	flag.StringVar(&o.searchHidden, "search-hidden", "16,32", "hidden sizes to search (e.g. -search-hidden 16,32,64)")
	flag.StringVar(&o.searchLayers, "search-layers", "1,2", "layer counts to search (e.g. -search-layers 1,2)")
	flag.StringVar(&o.searchLR, "search-lr", "1e-3,3e-3", "learning rates to search (e.g. -search-lr 1e-3,3e-3)")
	flag.StringVar(&o.searchBatch, "search-batch", "64,128", "batch sizes to search (e.g. -search-batch 64,128)")
	flag.IntVar(&o.searchRandom, "search-random", 0, "draw this many seeded random points (seed -seed) from the search values instead of the whole grid (e.g. -search-random 8)")
	flag.IntVar(&o.workers, "workers", runtime.NumCPU(), "search trials in flight (e.g. -workers 4)")
	flag.BoolVar(&o.published, "published", false, "use the published sizes: j=10 m=10 e=46 H=64 layers=2 batch=256 lr=1e-3 (e.g. -published)")
	flag.StringVar(&o.split, "split", "", "train/validation/test split: time (train on the earliest holds, test on the latest; the default with -logs) or random (seeded; the default for the synthetic log) (e.g. -split time)")
	flag.StringVar(&o.cell, "cell", "lstm", "recurrent cell: lstm or gru (lstm.GRU, float64 only) (e.g. -cell gru)")
	flag.StringVar(&o.engine, "engine", "native", "gradient engine: native (float64, PyTorch-exact), native32 (float32, about twice as fast) or gorgonia (the graph, slow) (e.g. -engine native32)")
	flag.StringVar(&o.spec, "spec", "", "run the search of a YAML search spec (package heldjobs) on -backend into -out: dataset, ledger, best model, bestmodel.info, tracking tables, curves.png (e.g. -spec search.yaml)")
	flag.StringVar(&o.backend, "backend", "local", "with -spec: local (in this process), process (worker processes), slurm, condor (write an HTCondor DAG into -out/condor; build with CGO_ENABLED=0) or condor-local (write it and run it here) (e.g. -backend slurm)")
	flag.StringVar(&o.dashboard, "dashboard", "", "with -spec on -backend local, process or slurm: serve the live dashboard of the search's ledger at this address while it runs (a bare :port listens on 127.0.0.1) (e.g. -dashboard :8080)")
	flag.StringVar(&o.model, "model", "", "decide every job on hold in -logs with the model directory of a search (its bestmodel/) and write -out/decisions.csv (e.g. -model out/search/bestmodel -logs EventLog)")
	if err := flag.Parse(args); err != nil {
		return o, err
	}
	if flag.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q: every input is a flag (see -h)", flag.Arg(0))
	}
	if o.published {
		o.j, o.m, o.e, o.hidden, o.layers, o.batch, o.lr = 10, 10, 46, 64, 2, 256, 1e-3
	}
	return o, o.check()
}

// timeSplit reports whether the split is time-ordered: -split time, or
// real logs without -split.
func (o options) timeSplit() bool { return o.split == "time" || (o.split == "" && o.logs != "") }

// splitName names the split in the summary.
func (o options) splitName() string {
	if o.timeSplit() {
		return "time-ordered"
	}
	return "random"
}

// cellFlag is the cell -cell names (check has refused any other).
func cellFlag(name string) lstm.Cell {
	if name == lstm.GRU.String() {
		return lstm.GRU
	}
	return lstm.LSTM
}

// check refuses flag values out of range.
func (o options) check() error {
	for _, c := range []struct {
		name string
		bad  bool
		want string
	}{
		{"-out", o.out == "", "a directory"},
		{"-jobs", o.jobs < 10, "at least 10"},
		{"-j", o.j < 1 || o.j > 1000, "1 to 1000"},
		{"-m", o.m < 1 || o.m > 1000, "1 to 1000"},
		{"-e", o.e < 1 || o.e > 1000, "1 to 1000"},
		{"-frame", o.frame < time.Second, "at least 1s"},
		{"-hidden", o.hidden < 1, "at least 1"},
		{"-layers", o.layers < 1, "at least 1"},
		{"-batch", o.batch < 1, "at least 1"},
		{"-epochs", o.epochs < 1, "at least 1"},
		{"-patience", o.patience == 0, "at least 1, or negative for no early stopping"},
		{"-lr", !(o.lr > 0) || math.IsInf(o.lr, 0), "a positive finite learning rate"},
		{"-threshold", !(o.threshold > 0 && o.threshold < 1), "a probability strictly between 0 and 1"},
		{"-snapshot", !(o.snapshot > 0 && o.snapshot <= 1), "a quantile in (0, 1]"},
		{"-workers", o.workers < 1, "at least 1"},
		{"-search-random", o.searchRandom < 0, "0 or more"},
		{"-engine", o.engine != "native" && o.engine != "native32" && o.engine != "gorgonia", "native, native32 or gorgonia"},
		{"-cell", o.cell != "lstm" && o.cell != "gru", "lstm or gru"},
		{"-split", o.split != "" && o.split != "random" && o.split != "time", "random or time"},
		{"-backend", !slices.Contains([]string{"local", "process", "slurm", "condor", "condor-local"}, o.backend), "local, process, slurm, condor or condor-local"},
		{"-logs", o.model != "" && o.logs == "", "the event logs whose held jobs -model decides"},
		{"-dashboard", o.dashboard != "" && (o.spec == "" || strings.HasPrefix(o.backend, "condor")), "-spec with -backend local, process or slurm (the DAG runs without a controller to watch)"},
		{"-dashboard", o.dashboard != "" && !listenAddr(o.dashboard), "an address such as :8080 or 127.0.0.1:8080"},
	} {
		if c.bad {
			return fmt.Errorf("flag %s: want %s", c.name, c.want)
		}
	}
	return nil
}

// listenAddr says whether addr is host:port with a port in 1..65535 (a bare
// :port listens on 127.0.0.1), so that a bad -dashboard is refused before
// any work rather than when the search starts to serve.
func listenAddr(addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 1 && n <= 65535
}

// errorLine is err for the terminal with the command's name once: the
// heldjobs package's errors already start with it.
func errorLine(err error) string {
	if msg := err.Error(); strings.HasPrefix(msg, "heldjobs: ") {
		return msg
	}
	return "heldjobs: " + err.Error()
}

// defaultShapes is the -j -m -frame shape and the same time window cut
// into half as many frames twice as long.
func defaultShapes(o options) string {
	a := shape{J: o.j, M: o.m, Frame: o.frame}
	b := shape{J: o.j, M: (o.m + 1) / 2, Frame: 2 * o.frame}
	if b == a {
		return a.String()
	}
	return a.String() + "," + b.String()
}

func run(ctx context.Context, o options) error {
	start := time.Now()
	// The -j -m -frame shape obeys the spec's limits (a window of at most
	// ten years, which eventlog.Builder's nanoseconds hold).
	if _, err := heldjobs.ParseShape(shape{J: o.j, M: o.m, Frame: o.frame}.String()); err != nil {
		return fmt.Errorf("-j -m -frame: %w", err)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	events, source, err := readEvents(o)
	if err != nil {
		return err
	}
	var jobs []*eventlog.Job
	if o.logs != "" {
		// Each log (and its rotations) is its own source: the job ids of
		// two schedds' logs repeat.
		jobs, _ = eventlog.GroupBySource(func(yield func(eventlog.Event, error) bool) {
			for _, ev := range events {
				if !yield(ev, nil) {
					return
				}
			}
		})
	} else {
		jobs = eventlog.Group(source, events)
	}
	fmt.Printf("%d events, %d jobs from %s\n", len(events), len(jobs), source)

	cfg := lstm.Config{
		LearningRate: o.lr, BatchSize: o.batch, Epochs: o.epochs, Patience: o.patience,
		Threshold: o.threshold, Seed: o.seed, Progress: os.Stderr,
	}
	switch o.engine {
	case "native":
		cfg.Engine = lstm.Native
	case "native32":
		cfg.Engine = lstm.Native32
	case "gorgonia":
		cfg.Reference = gorgonia.New()
	default:
		return fmt.Errorf("unknown -engine %q (native, native32, gorgonia)", o.engine)
	}
	ds := newDataset(o, jobs, &syncWriter{w: os.Stdout})
	var (
		data      *prepared
		model     *lstm.Model
		hist      *lstm.History
		trainTime time.Duration
		searched  map[string]any
	)
	if o.search {
		so, err := runSearch(ctx, o, cfg, ds, ds.w)
		if err != nil {
			return err
		}
		data, model, hist, searched = so.data, so.model, so.hist, so.summary
		best := so.rows[so.best]
		cfg.LearningRate, cfg.BatchSize = best.params.lr, best.params.batch
		trainTime = time.Duration(best.metric("seconds") * float64(time.Second))
		fmt.Printf("continuing with the best trial's model (trained in %s)\n", trainTime.Round(time.Millisecond))
	} else {
		var err error
		if data, err = ds.prepare(shape{J: o.j, M: o.m, Frame: o.frame}); err != nil {
			return err
		}
		arch := lstm.Architecture{Inputs: o.j * o.e, Hidden: o.hidden, Layers: o.layers, NewestFirst: !o.forward, Cell: cellFlag(o.cell)}
		fmt.Printf("training %s inputs=%d hidden=%d layers=%d batch=%d lr=%g\n", strings.ToUpper(o.cell), arch.Inputs, arch.Hidden, arch.Layers, cfg.BatchSize, cfg.LearningRate)
		model = lstm.New(arch, rand.New(rand.NewPCG(o.seed, 2)))
		trainStart := time.Now()
		if hist, err = lstm.Train(ctx, model, cfg, data.train, data.valid); err != nil {
			return err
		}
		trainTime = time.Since(trainStart)
		fmt.Printf("trained %d epochs in %s (best epoch %d, early stop %v)\n", len(hist.Epochs), trainTime.Round(time.Millisecond), hist.BestEpoch, hist.Stopped)
	}
	arch := model.Architecture()
	test, onHold, sh := data.test, data.onHold, data.shape

	met, testLoss, err := lstm.Evaluate(model, test, o.threshold)
	if err != nil {
		return err
	}
	fmt.Printf("test set (%d jobs), loss %.4f:\n", test.Len(), testLoss)
	printConfusion(met)
	testP, err := model.Probabilities(test.X)
	if err != nil {
		return err
	}
	modelScore := score(strings.ToUpper(o.cell)+" (this model)", testP, test.Y, o.threshold, o.seed)
	base, err := baselines(data.train, test, data.trainCodes, data.testCodes, o.threshold, o.seed)
	if err != nil {
		return err
	}
	printScores(os.Stdout, modelScore, base)

	if err := writeFile(filepath.Join(o.out, "model.json"), func(w *bytes.Buffer) error { return model.Save(w) }); err != nil {
		return err
	}
	if _, err := heldjobs.SaveTorch(o.out, model); err != nil {
		return err
	}
	decided, err := writeDecisions(filepath.Join(o.out, "decisions.csv"), model, onHold, o.threshold)
	if err != nil {
		return err
	}
	fmt.Printf("decisions for %d jobs on hold: %d release, %d remove -> decisions.csv\n", len(onHold), decided, len(onHold)-decided)
	if err := writeHistory(filepath.Join(o.out, "history.csv"), hist); err != nil {
		return err
	}
	if err := plotLoss(filepath.Join(o.out, "loss.png"), hist, cfg.Monitor); err != nil {
		return err
	}
	summary := map[string]any{
		"source": source, "events": len(events), "jobs": len(jobs), "held": data.held,
		"labelled": data.labelled, "on_hold": len(onHold),
		"split":  map[string]int{"train": data.train.Len(), "validation": data.valid.Len(), "test": test.Len()},
		"tensor": map[string]any{"j": sh.J, "m": sh.M, "e": o.e, "frame_seconds": sh.Frame.Seconds()},
		"model":  map[string]int{"inputs": arch.Inputs, "hidden": arch.Hidden, "layers": arch.Layers},
		"training": map[string]any{"epochs": len(hist.Epochs), "best_epoch": hist.BestEpoch, "early_stopped": hist.Stopped,
			"seconds": trainTime.Seconds(), "batch": cfg.BatchSize, "learning_rate": cfg.LearningRate},
		"test": map[string]any{"tp": met.TP, "fp": met.FP, "tn": met.TN, "fn": met.FN, "accuracy": met.Accuracy,
			"precision": met.Precision, "recall": met.Recall, "f1": met.F1, "loss": testLoss, "threshold": o.threshold},
	}
	summary["split_order"] = o.splitName()
	scores := map[string]any{}
	for _, s := range append([]scored{modelScore}, base...) {
		scores[s.name] = map[string]float64{"f1": s.f1, "f1_lo": s.lo, "f1_hi": s.hi}
	}
	summary["test_f1_beside_baselines"] = scores
	if searched != nil {
		summary["search"] = searched
	}
	if err := writeFile(filepath.Join(o.out, "metrics.json"), func(w *bytes.Buffer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(summary)
	}); err != nil {
		return err
	}
	fmt.Printf("outputs in %s (total %s)\n", o.out, time.Since(start).Round(time.Millisecond))
	return nil
}

func readEvents(o options) ([]eventlog.Event, string, error) {
	if o.logs != "" {
		paths := eventlog.SortRotated(pathlist.Split(o.logs))
		fs := eventlog.NewFiles(paths, eventlog.Options{Lenient: true, Location: time.UTC})
		defer fs.Close()
		events, err := fs.ReadAll()
		if err != nil {
			return nil, "", err
		}
		if n := fs.Damaged(); n > 0 {
			fmt.Printf("skipped %d damaged events\n", n)
		}
		for _, w := range fs.Warnings() {
			fmt.Println("warning:", w)
		}
		return events, strings.Join(paths, ","), nil
	}
	var buf bytes.Buffer
	st, err := synth.CondorGlobalLog(&buf, synth.CondorLogConfig{Seed: o.seed, Jobs: o.jobs, HoldRate: 0.3, Header: true})
	if err != nil {
		return nil, "", err
	}
	fmt.Printf("synthetic global log: %d jobs, %d events, %d held (%d meant to be released, %d removed)\n",
		st.Jobs, st.Events, st.Held, st.Release, st.Remove)
	path := filepath.Join(o.out, "global.log")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return nil, "", err
	}
	r := eventlog.NewReader(&buf)
	r.Location = time.UTC
	events, err := r.ReadAll()
	if err != nil || len(events) == 0 || o.snapshot >= 1 {
		return events, "synthetic", err
	}
	cut := heldjobs.Snapshot(events, o.snapshot)
	fmt.Printf("snapshot at %s: %d of %d events\n", cut[len(cut)-1].Time.Format(time.RFC3339), len(cut), len(events))
	return cut, "synthetic", nil
}

// stillHeld reports whether the job's last state event is a hold.
func stillHeld(j *eventlog.Job) bool {
	if j == nil {
		return false
	}
	ev, ok := j.LastState()
	return ok && ev.Code == eventlog.Held
}

func toData(samples []eventlog.Sample, idx []int) lstm.Data {
	d := lstm.Data{X: make([][][]float64, len(idx)), Y: make([]int, len(idx))}
	for i, k := range idx {
		d.X[i] = samples[k].Seq()
		d.Y[i] = int(samples[k].Label)
	}
	return d
}

func printConfusion(m lstm.Metrics) {
	fmt.Printf("                  predicted remove  predicted release\n")
	fmt.Printf("  actual remove   %16d  %17d\n", m.TN, m.FP)
	fmt.Printf("  actual release  %16d  %17d\n", m.FN, m.TP)
	fmt.Printf("  accuracy %.4f  precision %.4f  recall %.4f  F1 %.4f\n", m.Accuracy, m.Precision, m.Recall, m.F1)
}

func writeFile(path string, fill func(*bytes.Buffer) error) error {
	var buf bytes.Buffer
	if err := fill(&buf); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func writeDecisions(path string, m *lstm.Model, held []eventlog.Sample, threshold float64) (int, error) {
	released := 0
	err := writeFile(path, func(b *bytes.Buffer) error {
		w := csv.NewWriter(b)
		w.Write([]string{"job", "source", "first_event", "p_release", "decision"})
		for _, s := range held {
			p, d := m.Predict(s.Seq()), "remove"
			switch {
			case math.IsNaN(p):
				d = "undecided"
			case p >= threshold:
				d = "release"
				released++
			}
			w.Write([]string{s.Job.JobID.String(), s.Job.Source, s.Start.UTC().Format(time.RFC3339),
				strconv.FormatFloat(p, 'f', 6, 64), d})
		}
		w.Flush()
		return w.Error()
	})
	return released, err
}

func writeHistory(path string, h *lstm.History) error {
	return writeFile(path, func(b *bytes.Buffer) error {
		w := csv.NewWriter(b)
		w.Write([]string{"epoch", "train_loss", "valid_loss", "train_f1", "valid_f1", "valid_precision", "valid_recall", "best"})
		f := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
		for _, e := range h.Epochs {
			w.Write([]string{strconv.Itoa(e.Epoch), f(e.TrainLoss), f(e.ValidLoss), f(e.Train.F1), f(e.Valid.F1),
				f(e.Valid.Precision), f(e.Valid.Recall), strconv.FormatBool(e.Best)})
		}
		w.Flush()
		return w.Error()
	})
}

func plotLoss(path string, h *lstm.History, monitor lstm.Monitor) error {
	pts := make([]cplot.EpochPoint, len(h.Epochs))
	for i, e := range h.Epochs {
		pts[i] = cplot.EpochPoint{Epoch: e.Epoch, TrainLoss: e.TrainLoss, ValidLoss: e.ValidLoss, ValidF1: e.Valid.F1}
	}
	chosen := "highest validation F1"
	if monitor == lstm.MonitorLoss {
		chosen = "lowest validation loss"
	}
	return cplot.Training(path, "held-job LSTM: loss and F1 per epoch", pts, h.BestEpoch, chosen)
}
