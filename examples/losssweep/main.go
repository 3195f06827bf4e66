// Command losssweep runs a study of training curves end to end with package
// sweep. The built-in study is 216 runs: learning rate {0.05, 0.1, 0.2} for
// SGD and {0.005, 0.01, 0.02} for AdamW (a conditional grid axis) × weight
// decay {1e-4, 1e-3, 1e-2} × seeds 0–5 × variants {base, bn_off, narrow,
// adamw} of a small pure-Go network (50 epochs, validation every quarter
// epoch, streamed while the run trains). It records every run in a SQLite
// ledger, runs them in this process, as detached worker processes or on
// Slurm, optionally prunes hopeless runs (ASHA or the median rule),
// collects the results into a checksummed archive, checks completeness,
// exports the per-run dataset (CSV, JSON Lines, Parquet, metadata,
// trajectories), evaluates H1/H2 by variant and plots the curves. Run it
// again with the same -out and it resumes: finished runs are kept, the rest
// run.
//
//	go run ./examples/losssweep -out out/losssweep
//	go run ./examples/losssweep -out out/losssweep -backend slurm
//	go run ./examples/losssweep -out out/losssweep -status
//
// Exit status: 0 when every run completed (or was pruned), 1 when the sweep
// is incomplete (failed, missing or non-finite runs), 2 for a usage, spec
// or system error.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	gonet "net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/crosscluster/crosscluster/examples/losssweep/internal/curves"
	"github.com/crosscluster/crosscluster/internal/buildinfo"
	"github.com/crosscluster/crosscluster/internal/plot"
	"github.com/crosscluster/crosscluster/sweep"
	"github.com/crosscluster/crosscluster/sweep/dashboard"
	"github.com/crosscluster/crosscluster/sweep/parquet"
	"github.com/crosscluster/crosscluster/sweep/slurm"
)

// studySpec is the study, in the YAML form sweep.LoadSpec reads. AdamW's
// learning rates are a conditional axis: its step size does not grow with
// the gradient as SGD's does, so it needs rates about ten times smaller
// (with SGD's, lr 0.2 diverges).
const studySpec = `
name: losssweep
base: {epochs: 50, batch_size: 32, hidden: 32, norm: batch, optimizer: sgd}
grid:
  - {key: lr, values: [0.05, 0.1, 0.2], when: {optimizer: sgd}}
  - {key: lr, values: [0.005, 0.01, 0.02], when: {optimizer: adamw}}
  - {key: weight_decay, short: wd, values: [1e-4, 1e-3, 1e-2]}
  - {key: seed, short: s, values: [0, 1, 2, 3, 4, 5]}
variants:
  - {name: base}
  - {name: bn_off, set: {norm: none}}
  - {name: narrow, set: {hidden: 8}}
  - {name: adamw, set: {optimizer: adamw}}
`

// trainerVersion names what, besides the parameters, determines a run's
// result: the task and the trainer. It is recorded in the ledger (spec
// inputs); change it when train.go changes what it computes, and a ledger
// of the old results refuses to mix them with new ones.
const trainerVersion = "teacher-student v2 (20-d inputs, 5 classes, 16-unit tanh teacher, 512 fresh points per epoch, 256 validation points)"

type config struct {
	out, backend, ledger, spec string
	workers, epochs            int
	dry                        bool
	status                     bool
	list, requeue, cancel      string
	force                      bool
	acceptWorkDir, acceptInput bool
	recordCommit               bool
	prune                      string
	notify                     string
	serve                      string
	progress                   io.Writer // stderr in main; nil: quiet
}

// newFlags defines the command's flags on cfg. Every flag that takes a
// value shows an example of one in -h (TestFlagsHaveExamples).
func newFlags(cfg *config) *flag.FlagSet {
	fs := flag.NewFlagSet("losssweep", flag.ContinueOnError)
	fs.StringVar(&cfg.out, "out", "out/losssweep", "output directory: ledger, work, archive, export, plots (e.g. -out /tmp/ls)")
	fs.StringVar(&cfg.spec, "spec", "", "YAML sweep spec instead of the built-in 216-run study (e.g. -spec my.yaml; keys in docs/losssweep.md)")
	fs.IntVar(&cfg.epochs, "epochs", 0, "set every run's epochs, which is part of each run's identity (e.g. -epochs 5; 0 keeps the spec's)")
	fs.StringVar(&cfg.backend, "backend", "local", "where runs execute: local (goroutines in this process), process (detached worker processes that outlive this one) or slurm (e.g. -backend slurm)")
	fs.IntVar(&cfg.workers, "workers", runtime.NumCPU(), "runs in flight (local, process) or the Slurm array throttle %P (e.g. -workers 4)")
	fs.StringVar(&cfg.ledger, "ledger", "", "ledger file (default <out>/ledger.db; e.g. -ledger /tmp/ls.db)")
	fs.BoolVar(&cfg.dry, "dry-run", false, "list the runs (index, id, slug) and exit (e.g. -dry-run -spec my.yaml)")
	fs.BoolVar(&cfg.status, "status", false, "print the ledger's status and its failed runs with their log tails, and exit (e.g. -out /tmp/ls -status)")
	fs.StringVar(&cfg.list, "list", "", "list the runs in a state (queued, running, completed, failed, pruned, cancelled or all) and exit (e.g. -list failed)")
	fs.StringVar(&cfg.requeue, "requeue", "", "put runs back in the queue and exit: a state (failed, cancelled, pruned; completed with -force) or comma-separated run ids or slugs (e.g. -requeue failed)")
	fs.StringVar(&cfg.cancel, "cancel", "", "cancel runs and exit: all, queued, running, or comma-separated run ids or slugs (e.g. -cancel all)")
	fs.BoolVar(&cfg.force, "force", false, "with -requeue, allow requeueing completed runs (e.g. -requeue completed -force)")
	fs.BoolVar(&cfg.acceptWorkDir, "accept-work-dir", false, "use a work directory that holds runs of another (or a deleted) ledger, e.g. after rm ledger.db")
	fs.BoolVar(&cfg.acceptInput, "accept-inputs", false, "record the current trainer version (or commit) in a ledger that holds results of another, e.g. after editing train.go")
	fs.BoolVar(&cfg.recordCommit, "record-commit", false, "add the binary's VCS revision to the runs' inputs, e.g. go build ./examples/losssweep && ./losssweep -record-commit")
	fs.StringVar(&cfg.prune, "prune", "none", "stop hopeless runs: none, asha (successive halving, rungs at 1, 3, 9, 27 epochs, eta 3) or median (median stopping rule after 5 epochs), e.g. -prune asha")
	fs.StringVar(&cfg.serve, "serve", "", "serve a live dashboard of the sweep at this address (a bare :port listens on 127.0.0.1) while it runs and after it, until Ctrl-C (e.g. -serve :8080)")
	fs.StringVar(&cfg.notify, "notify", "", "shell command run when the sweep finishes or a run fails for good, a JSON summary on its stdin (e.g. -notify 'cat >> notify.log')")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: losssweep [flags]\n\nRuns a sweep of training runs with a crash-safe ledger, then exports and analyses it.\n\n")
		fs.PrintDefaults()
	}
	return fs
}

func main() {
	// Under the process and Slurm backends this program is also the worker.
	if t, ok, err := sweep.WorkerTask(); ok {
		if err != nil {
			fmt.Fprintln(os.Stderr, "losssweep worker:", err)
			os.Exit(2)
		}
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		if err := worker(ctx, t); err != nil {
			fmt.Fprintln(os.Stderr, "losssweep worker:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(command(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// command runs losssweep with args and returns its exit status: 0 done, 1
// an incomplete sweep, 2 a refused flag or a failure, 130 interrupted.
// Every flag is checked before anything is created.
func command(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var cfg config
	fs := newFlags(&cfg)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "losssweep: unexpected argument %q (every setting is a flag; -h lists them)\n", fs.Arg(0))
		return 2
	}
	cfg.progress = stderr
	code, err := run(ctx, cfg, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "losssweep:", err)
		return 2
	}
	return code
}

// checkFlags refuses flag values no sweep can use, before any work.
func checkFlags(cfg config) error {
	switch cfg.backend {
	case "local", "process", "slurm":
	default:
		return fmt.Errorf("-backend %q: want local, process or slurm", cfg.backend)
	}
	if cfg.workers < 1 {
		return fmt.Errorf("-workers %d: want at least 1", cfg.workers)
	}
	if cfg.epochs < 0 {
		return fmt.Errorf("-epochs %d: want a positive number of epochs, or 0 to keep the spec's", cfg.epochs)
	}
	if _, err := pruner(cfg); err != nil {
		return err
	}
	if cfg.out == "" {
		return errors.New("-out \"\": want a directory")
	}
	if cfg.serve != "" {
		addr := cfg.serve
		if strings.HasPrefix(addr, ":") {
			addr = "127.0.0.1" + addr
		}
		if _, port, err := gonet.SplitHostPort(addr); err != nil || port == "" {
			return fmt.Errorf("-serve %q: want an address such as :8080 or 127.0.0.1:8080", cfg.serve)
		}
	}
	if cfg.list != "" && cfg.list != "all" {
		if _, ok := parseState(cfg.list); !ok {
			return fmt.Errorf("-list %q: want a state (%v) or all", cfg.list, sweep.States())
		}
	}
	if cfg.force && cfg.requeue == "" {
		return errors.New("-force goes with -requeue")
	}
	n := 0
	for _, set := range []bool{cfg.dry, cfg.status, cfg.list != "", cfg.requeue != "", cfg.cancel != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return errors.New("-dry-run, -status, -list, -requeue and -cancel each do one thing: give one of them")
	}
	if cfg.ledger != "" {
		if _, err := os.Stat(cfg.ledger); err == nil {
			l, err := sweep.OpenLedgerReadOnly(cfg.ledger)
			if err != nil {
				return fmt.Errorf("-ledger: %w", err)
			}
			l.Close()
		}
	}
	return nil
}

var (
	taskOnce sync.Once
	teach    *teacher
	validD   dataset
)

// param is one parameter the trainer reads, with what it accepts.
type param struct {
	name, want, example string
	ok                  func(sweep.Value) bool
}

func isInt(lo, hi int64) func(sweep.Value) bool {
	return func(v sweep.Value) bool {
		return (v.Kind == sweep.Int || v.Kind == sweep.Float && v.Float() == math.Trunc(v.Float())) && v.Int() >= lo && v.Int() <= hi
	}
}

func isNum(lo float64, open bool) func(sweep.Value) bool {
	return func(v sweep.Value) bool {
		x := v.Float()
		return (v.Kind == sweep.Int || v.Kind == sweep.Float) && !math.IsInf(x, 0) && (x > lo || !open && x == lo)
	}
}

func oneOf(s ...string) func(sweep.Value) bool {
	return func(v sweep.Value) bool { return v.Kind == sweep.String && slices.Contains(s, v.Lit) }
}

// trainerParams are the parameters every run needs, and all the trainer
// reads.
var trainerParams = []param{
	{"epochs", "an integer in 1..10000", "base: {epochs: 50}", isInt(1, 10000)},
	{"batch_size", fmt.Sprintf("an integer in 1..%d", nTrain), "base: {batch_size: 32}", isInt(1, nTrain)},
	{"hidden", "an integer in 1..4096", "base: {hidden: 32}", isInt(1, 4096)},
	{"norm", "batch or none", "base: {norm: batch}", oneOf("batch", "none")},
	{"optimizer", "sgd or adamw", "base: {optimizer: sgd}", oneOf("sgd", "adamw")},
	{"lr", "a number > 0", "grid: [{key: lr, values: [0.05, 0.1]}]", isNum(0, true)},
	{"weight_decay", "a number ≥ 0", "grid: [{key: weight_decay, values: [1e-4, 1e-3]}]", isNum(0, false)},
	{"seed", "an integer ≥ 0", "grid: [{key: seed, values: [0, 1, 2]}]", isInt(0, math.MaxInt64)},
}

// checkRuns checks every point against what the trainer needs, before any
// work: a parameter missing, of the wrong kind or out of range, or one the
// trainer does not read, is an error that names the run, the parameter and
// what to write instead.
func checkRuns(spec *sweep.Spec, pts []sweep.Point) error {
	known := map[string]bool{"variant": true}
	for _, p := range trainerParams {
		known[p.name] = true
	}
	var problems []string
	seen := map[string]bool{}
	add := func(key, msg string) {
		if !seen[key] {
			seen[key] = true
			problems = append(problems, msg)
		}
	}
	for _, pt := range pts {
		for _, p := range trainerParams {
			v, ok := pt.Params[p.name]
			switch {
			case !ok:
				add("missing "+p.name, fmt.Sprintf("run %s has no parameter %s; the trainer needs %s (e.g. %s)", pt.Slug, p.name, p.want, p.example))
			case !p.ok(v):
				add("bad "+p.name+v.Lit, fmt.Sprintf("run %s: %s is %q; it must be %s (e.g. %s)", pt.Slug, p.name, v.Lit, p.want, p.example))
			}
		}
		for k := range pt.Params {
			if !known[k] {
				add("unknown "+k, fmt.Sprintf("parameter %s (run %s) is not read by the trainer, which reads %s; remove it or rename it", k, pt.Slug, paramNames()))
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	sort.Strings(problems)
	const show = 8
	more := ""
	if len(problems) > show {
		more = fmt.Sprintf("\n  ... and %d more", len(problems)-show)
		problems = problems[:show]
	}
	return fmt.Errorf("spec %q cannot run; nothing was started:\n  %s%s", spec.Name, strings.Join(problems, "\n  "), more)
}

func paramNames() string {
	var n []string
	for _, p := range trainerParams {
		n = append(n, p.name)
	}
	return strings.Join(n, ", ")
}

func hyperOf(p map[string]sweep.Value) hyper {
	return hyper{
		lr: p["lr"].Float(), wd: p["weight_decay"].Float(), seed: uint64(p["seed"].Int()),
		hidden: int(p["hidden"].Int()), norm: p["norm"].String() == "batch",
		adamw: p["optimizer"].String() == "adamw", epochs: int(p["epochs"].Int()), batchSize: int(p["batch_size"].Int()),
	}
}

// trainTask trains one run, streaming its validation and training loss to
// the run's metric log as it goes.
func trainTask(ctx context.Context, t sweep.Task) (*sweep.Result, error) {
	taskOnce.Do(func() { teach, validD = makeTask() })
	hp := hyperOf(t.Params)
	ml, err := sweep.OpenMetricLog(t.Dir)
	if err != nil {
		return nil, err
	}
	defer ml.Close()
	report := func(e, vl, tl float64) error {
		if err := ml.Log("val_loss", e, vl); err != nil {
			return err
		}
		return ml.Log("train_loss", e, tl)
	}
	_, vl, _, acc, err := train(ctx, hp, teach, validD, report)
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
		Metrics: map[string]float64{"final_val_loss": vl[len(vl)-1], "val_accuracy": acc},
	}, nil
}

func worker(ctx context.Context, t sweep.Task) error {
	res, err := trainTask(ctx, t)
	if err != nil {
		return err
	}
	res.RunID, res.Attempt = t.RunID, t.Attempt
	return sweep.WriteResult(t.Dir, res)
}

// progress prints the controller's status lines, at most one every two
// seconds plus the last one.
type progress struct {
	w    io.Writer
	last time.Time
	line string
}

func (p *progress) Write(b []byte) (int, error) {
	p.line = strings.TrimSpace(string(b))
	if time.Since(p.last) >= 2*time.Second {
		p.last = time.Now()
		fmt.Fprintln(p.w, p.line)
	}
	return len(b), nil
}

func loadSpec(cfg config) (*sweep.Spec, error) {
	var spec *sweep.Spec
	var err error
	if cfg.spec != "" {
		f, err := os.Open(cfg.spec)
		if err != nil {
			return nil, err
		}
		spec, err = sweep.LoadSpec(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cfg.spec, err)
		}
	} else if spec, err = sweep.LoadSpec(strings.NewReader(studySpec)); err != nil {
		return nil, err
	}
	if cfg.epochs < 0 {
		return nil, fmt.Errorf("-epochs %d: want a positive number of epochs, or 0 to keep the spec's", cfg.epochs)
	}
	if cfg.epochs > 0 {
		// In the parameters, hence in every run's identity: a 5-epoch
		// result is never taken for a 50-epoch one.
		if spec.Base == nil {
			spec.Base = map[string]sweep.Value{}
		}
		spec.Base["epochs"] = sweep.ValueOf(int64(cfg.epochs))
		for i := range spec.Variants {
			delete(spec.Variants[i].Set, "epochs")
		}
	}
	if spec.Inputs == nil {
		spec.Inputs = map[string]string{}
	}
	spec.Inputs["trainer"] = trainerVersion
	if cfg.recordCommit {
		rev, err := vcsRevision()
		if err != nil {
			return nil, err
		}
		spec.Inputs["code"] = rev
	}
	return spec, nil
}

func vcsRevision() (string, error) {
	rev, dirty, ok := buildinfo.Revision()
	if !ok {
		return "", errors.New("-record-commit: no VCS revision in this binary; build it with go build inside the repository (go run does not record one)")
	}
	if dirty {
		rev += "+modified"
	}
	return rev, nil
}

// run runs the command; a Ctrl-C or SIGTERM (ctx cancelled) at any step,
// from enqueueing to the export, leaves an incomplete sweep to resume: one
// line, exit status 130. A refusal before any run was enqueued leaves no
// output directory it created behind.
func run(ctx context.Context, cfg config, stdout io.Writer) (int, error) {
	if err := checkFlags(cfg); err != nil {
		return 0, err
	}
	out, err := filepath.Abs(cfg.out)
	if err != nil {
		return 0, err
	}
	_, statErr := os.Stat(out)
	fresh := errors.Is(statErr, os.ErrNotExist)
	enqueued := false
	code, err := runSweep(ctx, cfg, stdout, &enqueued)
	if fresh && !enqueued && (err != nil || cfg.requeue != "" || cfg.cancel != "") {
		os.RemoveAll(out)
	}
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		fmt.Fprintln(stdout, "losssweep: interrupted; run again with the same -out to resume")
		return 130, nil
	}
	return code, err
}

func runSweep(ctx context.Context, cfg config, stdout io.Writer, enqueued *bool) (int, error) {
	pruner, err := pruner(cfg)
	if err != nil {
		return 0, err
	}
	spec, err := loadSpec(cfg)
	if err != nil {
		return 0, err
	}
	pts, err := spec.Expand()
	if err != nil {
		return 0, err
	}
	if err := checkRuns(spec, pts); err != nil {
		return 0, err
	}
	if cfg.dry {
		return 0, dryRun(stdout, pts)
	}
	if pruner != nil {
		if a, ok := pruner.(sweep.ASHA); ok {
			for _, p := range pts {
				a.MaxStep = max(a.MaxStep, p.Params["epochs"].Float())
			}
			pruner = a
		}
	}
	out, err := filepath.Abs(cfg.out)
	if err != nil {
		return 0, err
	}
	if cfg.ledger == "" {
		cfg.ledger = filepath.Join(out, "ledger.db")
	}
	work := filepath.Join(out, "work")
	switch {
	case cfg.status:
		return status(ctx, cfg, stdout)
	case cfg.list != "":
		return list(ctx, cfg, stdout)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return 0, err
	}
	l, err := sweep.OpenLedger(cfg.ledger)
	if err != nil {
		return 0, err
	}
	defer l.Close()
	if cfg.serve != "" {
		stop, err := serveDashboard(ctx, cfg, stdout)
		if err != nil {
			return 0, err
		}
		defer stop()
	}
	c := &sweep.Controller{Ledger: l, WorkDir: work, Parallel: cfg.workers, Pruner: pruner, AcceptWorkDir: cfg.acceptWorkDir}
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	switch cfg.backend {
	case "local":
		c.Backend = &sweep.Local{Func: trainTask}
		c.PollInterval = 50 * time.Millisecond
		if pruner != nil {
			// A run here takes about 0.1 s of CPU: a pruner polled every
			// 50 ms would decide several rungs late.
			c.PollInterval = 2 * time.Millisecond
		}
	case "process":
		c.Backend = &sweep.Local{Command: []string{exe}, StateDir: filepath.Join(out, "launch")}
		c.PollInterval = 100 * time.Millisecond
	case "slurm":
		c.Backend = &slurm.Backend{Command: []string{exe}, Dir: filepath.Join(out, "slurm"), Name: "losssweep", MaxParallel: cfg.workers}
		c.Parallel = len(pts)
		c.PollInterval = 500 * time.Millisecond
	}
	switch {
	case cfg.requeue != "":
		return requeue(ctx, cfg, l, stdout)
	case cfg.cancel != "":
		return cancel(ctx, cfg, c, stdout)
	}
	if cfg.acceptInput {
		if err := l.AcceptInputs(ctx, spec.Inputs); err != nil {
			return 0, err
		}
	}
	added, err := l.Enqueue(ctx, spec, slices.Values(pts))
	*enqueued = *enqueued || added > 0
	if err != nil {
		var ie *sweep.InputsError
		if errors.As(err, &ie) {
			return 0, fmt.Errorf("%w (losssweep: -accept-inputs records the new ones, then -requeue completed -force recomputes the runs)", err)
		}
		return 0, err
	}
	st, err := l.Status(ctx, cfg.workers)
	if err != nil {
		return 0, err
	}
	if added == len(pts) {
		fmt.Fprintf(stdout, "losssweep: %d runs enqueued in %s", added, cfg.ledger)
		if st.Total > added {
			fmt.Fprintf(stdout, " (the ledger holds %d runs; other specs' runs are kept, not run again)", st.Total)
		}
		fmt.Fprintln(stdout)
	} else {
		fmt.Fprintf(stdout, "losssweep: resuming %s: %d completed, %d failed, %d pruned, %d queued, %d running (%d new)\n",
			cfg.ledger, st.Counts[sweep.Completed], st.Counts[sweep.Failed], st.Counts[sweep.Pruned], st.Counts[sweep.Queued], st.Counts[sweep.Running], added)
	}
	if cfg.notify != "" {
		c.Hook = []string{"sh", "-c", cfg.notify}
	}
	prog := &progress{w: io.Discard}
	if cfg.progress != nil {
		prog.w = cfg.progress
		c.Progress = prog
	}
	start := time.Now()
	sum, err := c.Run(ctx)
	if prog.line != "" && cfg.progress != nil {
		fmt.Fprintln(cfg.progress, prog.line)
	}
	if errors.Is(err, sweep.ErrHook) {
		// Only a finished sweep reports its notifications' failures: warn
		// and write the outputs all the same.
		fmt.Fprintf(stdout, "losssweep: warning: -notify: %v\n", err)
	} else if err != nil {
		return 0, err
	}
	fmt.Fprintf(stdout, "losssweep: controller finished in %v: %d completed, %d failed, %d pruned, %d retried this invocation\n",
		time.Since(start).Round(time.Millisecond), sum.Completed, sum.Failed, sum.Pruned, sum.Retried)
	return report(ctx, cfg, l, spec, pts, work, out, stdout)
}

// report collects, exports, analyses and plots a finished sweep.
func report(ctx context.Context, cfg config, l *sweep.Ledger, spec *sweep.Spec, pts []sweep.Point, work, out string, stdout io.Writer) (int, error) {
	st, err := l.Status(ctx, cfg.workers)
	if err != nil {
		return 0, err
	}
	if err := st.WriteTable(stdout); err != nil {
		return 0, err
	}
	nFailed, err := l.WriteFailed(ctx, stdout, 5)
	if err != nil {
		return 0, err
	}
	step := func(what string, f func() error) error {
		t0 := time.Now()
		err := f()
		if cfg.progress != nil && time.Since(t0) > 2*time.Second {
			fmt.Fprintf(cfg.progress, "losssweep: %s took %v\n", what, time.Since(t0).Round(100*time.Millisecond))
		}
		return err
	}
	archive := filepath.Join(out, "archive")
	var skipped []sweep.Problem
	var results map[string]*sweep.Result
	if err := step("collecting", func() (err error) {
		results, skipped, err = l.Collect(ctx, work, archive)
		return err
	}); err != nil {
		return 0, err
	}
	nv, err := sweep.VerifyArchive(ctx, archive)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(stdout, "archive: %d files, checksums verified (%s)\n", nv, filepath.Join(archive, "manifest.json"))
	for _, p := range skipped {
		fmt.Fprintf(stdout, "archive: skipped run %s (%s): %s\n", p.Slug, p.RunID, p.Err)
	}
	comp, complete, err := l.CheckCompleteness(ctx, work, slices.Values(pts))
	if err != nil {
		return 0, err
	}
	fmt.Fprintln(stdout, "completeness:", comp)

	all, err := l.Runs(ctx)
	if err != nil {
		return 0, err
	}
	// Only this spec's runs: the ledger may hold others (another -epochs).
	want := make(map[string]bool, len(pts))
	for _, p := range pts {
		want[p.ID] = true
	}
	var runs []sweep.Run
	for _, r := range all {
		if want[r.ID] {
			runs = append(runs, r)
		}
	}
	ccfg := curves.Default()
	ds := curves.Table(runs, results, ccfg)
	series := map[string]map[string]sweep.Series{}
	for _, r := range runs {
		if res := results[r.ID]; res != nil {
			series[r.Slug] = res.Series
		}
	}
	exportDir := filepath.Join(out, "export")
	if err := step("exporting", func() error {
		return sweep.Export(ctx, exportDir, "losssweep", ds, sweep.ExportConfig{JSONL: true, Series: series, Skipped: skipped,
			Formats: map[string]func(io.Writer, *sweep.Dataset) error{"parquet": parquet.Write}})
	}); err != nil {
		return 0, err
	}
	f, err := os.Open(filepath.Join(exportDir, "losssweep.csv"))
	if err != nil {
		return 0, err
	}
	err = curves.CheckSchema(f, curves.OutputColumns())
	f.Close()
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(stdout, "export: %s (%d rows, schema ok), .jsonl, .parquet, metadata, trajectories in %s\n",
		filepath.Join(exportDir, "losssweep.csv"), len(ds.Rows), filepath.Join(exportDir, "losssweep_trajectories"))

	hyp := curves.Hypotheses(ds, ccfg)
	var md strings.Builder
	if err := curves.WriteHypotheses(&md, hyp, ccfg); err != nil {
		return 0, err
	}
	fmt.Fprint(stdout, md.String())
	if err := writeAtomic(filepath.Join(out, "hypotheses.md"), []byte(md.String())); err != nil {
		return 0, err
	}
	hj, _ := json.MarshalIndent(hypJSON(hyp), "", "  ")
	if err := writeAtomic(filepath.Join(out, "hypotheses.json"), append(hj, '\n')); err != nil {
		return 0, err
	}
	png := filepath.Join(out, "curves.png")
	var curvePlots []plot.SweepCurve
	for _, r := range runs {
		if res := results[r.ID]; res != nil && r.State == sweep.Completed {
			s := res.Series["val_loss"]
			curvePlots = append(curvePlots, plot.SweepCurve{Name: r.Slug, Group: r.Variant, Step: s.Step, Value: s.Value})
		}
	}
	title := fmt.Sprintf("validation loss, %s: %d completed runs", spec.Name, len(curvePlots))
	switch err := plot.SweepCurves(png, title, "validation cross-entropy", curvePlots); {
	case errors.Is(err, plot.ErrNoData):
		fmt.Fprintf(stdout, "plot: %v; curves.png not written\n", err)
	case err != nil:
		return 0, err
	default:
		fmt.Fprintln(stdout, "plot:", png)
	}
	if !complete || nFailed > 0 {
		fmt.Fprintf(stdout, "losssweep: sweep incomplete: %s\n", comp)
		return 1, nil
	}
	return 0, nil
}

func pruner(cfg config) (sweep.Pruner, error) {
	switch cfg.prune {
	case "", "none":
		return nil, nil
	case "asha":
		return sweep.ASHA{Series: "val_loss", MinStep: 1, Eta: 3}, nil
	case "median":
		return sweep.MedianRule{Series: "val_loss", Warmup: 5}, nil
	}
	return nil, fmt.Errorf("-prune %q: want none, asha or median", cfg.prune)
}

func status(ctx context.Context, cfg config, stdout io.Writer) (int, error) {
	l, err := sweep.OpenLedgerReadOnly(cfg.ledger)
	if err != nil {
		return 0, err
	}
	defer l.Close()
	st, err := l.Status(ctx, cfg.workers)
	if err != nil {
		return 0, err
	}
	if err := st.WriteTable(stdout); err != nil {
		return 0, err
	}
	_, err = l.WriteFailed(ctx, stdout, 5)
	return 0, err
}

func parseState(s string) (sweep.State, bool) {
	for _, st := range sweep.States() {
		if string(st) == s {
			return st, true
		}
	}
	return "", false
}

func list(ctx context.Context, cfg config, stdout io.Writer) (int, error) {
	l, err := sweep.OpenLedgerReadOnly(cfg.ledger)
	if err != nil {
		return 0, err
	}
	defer l.Close()
	var states []sweep.State
	if cfg.list != "all" {
		st, ok := parseState(cfg.list)
		if !ok {
			return 0, fmt.Errorf("-list %q: want a state (%v) or all", cfg.list, sweep.States())
		}
		states = []sweep.State{st}
	}
	rs, err := l.Summaries(ctx, states...)
	if err != nil {
		return 0, err
	}
	for _, r := range rs {
		line := fmt.Sprintf("%s  %-34s %-9s attempt %d", r.ID, r.Slug, r.State, r.Attempt)
		if v, ok := r.Latest["val_loss"]; ok {
			line += fmt.Sprintf("  val_loss %.4f at epoch %g", v, r.LatestStep["val_loss"])
		}
		if r.ErrorText != "" {
			line += "  [" + string(r.ErrorClass) + "] " + r.ErrorText
		}
		fmt.Fprintln(stdout, line)
	}
	fmt.Fprintf(stdout, "%d runs\n", len(rs))
	return 0, nil
}

// runIDs resolves comma-separated ids or slugs.
func runIDs(ctx context.Context, l *sweep.Ledger, arg string) ([]string, error) {
	rs, err := l.Runs(ctx)
	if err != nil {
		return nil, err
	}
	bySlug := map[string]string{}
	byID := map[string]bool{}
	for _, r := range rs {
		bySlug[r.Slug], byID[r.ID] = r.ID, true
	}
	var ids []string
	for _, a := range strings.Split(arg, ",") {
		a = strings.TrimSpace(a)
		switch {
		case byID[a]:
			ids = append(ids, a)
		case bySlug[a] != "":
			ids = append(ids, bySlug[a])
		default:
			return nil, fmt.Errorf("no run with id or slug %q in %s (-list all shows them)", a, l.Path())
		}
	}
	return ids, nil
}

func requeue(ctx context.Context, cfg config, l *sweep.Ledger, stdout io.Writer) (int, error) {
	var ids []string
	var states []sweep.State
	if st, ok := parseState(cfg.requeue); ok {
		states = []sweep.State{st}
	} else {
		var err error
		if ids, err = runIDs(ctx, l, cfg.requeue); err != nil {
			return 0, err
		}
	}
	done, err := l.Requeue(ctx, ids, states, cfg.force)
	fmt.Fprintf(stdout, "losssweep: %d run(s) requeued; run losssweep again (same -out) to run them\n", len(done))
	return 0, err
}

func cancel(ctx context.Context, cfg config, c *sweep.Controller, stdout io.Writer) (int, error) {
	var ids []string
	switch cfg.cancel {
	case "all":
	case "queued", "running":
		rs, err := c.Ledger.Runs(ctx, sweep.State(cfg.cancel))
		if err != nil {
			return 0, err
		}
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
		if len(ids) == 0 {
			fmt.Fprintf(stdout, "losssweep: no %s run to cancel\n", cfg.cancel)
			return 0, nil
		}
	default:
		var err error
		if ids, err = runIDs(ctx, c.Ledger, cfg.cancel); err != nil {
			return 0, err
		}
	}
	before, serr := c.Ledger.Status(ctx, 1)
	if serr != nil {
		return 0, serr
	}
	err := c.Cancel(ctx, ids...)
	st, serr := c.Ledger.Status(ctx, 1)
	if serr == nil {
		fmt.Fprintf(stdout, "losssweep: %d run(s) cancelled now, %d cancelled in the ledger\n",
			st.Counts[sweep.Cancelled]-before.Counts[sweep.Cancelled], st.Counts[sweep.Cancelled])
	}
	return 0, errors.Join(err, serr)
}

type hypRow struct {
	Group     string   `json:"group"`
	AllRuns   int      `json:"runs_in_group"`
	Completed int      `json:"completed_runs"`
	Runs      int      `json:"runs"`
	FracR2    float64  `json:"fraction_r2_ge_threshold"`
	H1        bool     `json:"h1"`
	Rho       *float64 `json:"spearman_rho"`
	P         *float64 `json:"p_value"`
	H2        bool     `json:"h2"`
}

func hypJSON(rows []curves.HypothesisRow) []hypRow {
	var out []hypRow
	fin := func(x float64) *float64 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return &x
	}
	for _, r := range rows {
		out = append(out, hypRow{r.Group, r.Runs, r.Completed, r.N, r.FracR2, r.H1, fin(r.Rho), fin(r.P), r.H2})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Group == "all" && out[j].Group != "all" })
	return out
}

// serveDashboard serves the dashboard over a read-only view of the ledger
// at cfg.serve (a bare ":port" on 127.0.0.1). The returned stop waits for
// ctx (Ctrl-C) so that the page stays up after the sweep, then closes.
func serveDashboard(ctx context.Context, cfg config, stdout io.Writer) (stop func(), err error) {
	addr := cfg.serve
	if strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr
	}
	ro, err := sweep.OpenLedgerReadOnly(cfg.ledger)
	if err != nil {
		return nil, err
	}
	ln, err := gonet.Listen("tcp", addr)
	if err != nil {
		ro.Close()
		return nil, fmt.Errorf("-serve %s: %w", cfg.serve, err)
	}
	srv := &http.Server{Handler: dashboard.New(ro, dashboard.Options{Metric: "val_loss"}), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	fmt.Fprintf(stdout, "dashboard: http://%s/\n", ln.Addr())
	return func() {
		fmt.Fprintf(stdout, "dashboard still at http://%s/; Ctrl-C to stop\n", ln.Addr())
		<-ctx.Done()
		srv.Close()
		ro.Close()
	}, nil
}

// writeAtomic writes path through a temporary file and a rename, so that
// an interruption never leaves it cut short under its name.
func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// dryRun writes one line per point of spec (index, id, slug) and a total.
func dryRun(w io.Writer, pts []sweep.Point) error {
	for i, p := range pts {
		if _, err := fmt.Fprintf(w, "%4d  %s  %s\n", i, p.ID, p.Slug); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "%d runs\n", len(pts))
	return err
}
