package heldjobs

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/internal/cputime"
	"github.com/crosscluster/crosscluster/lstm"
	"github.com/crosscluster/crosscluster/sweep"
)

// RunNode runs one node command of the pipeline, the command line after
// "node" (a program calls it when its first argument is "node"):
//
//	parse   -spec spec.json -out DIR              build the dataset (Parse)
//	train   -data DIR [-model DIR] [-retry N -checkpoint-every D]
//	                                              train the sweep task of the environment (TrainRun)
//	check   -return N [-retry N -max-retries N] -id RUN -run DIR -model DIR [-log FILE -no-time-retry]
//	                                              a training node's POST script (on the last retry a failed run is recorded, FailedFile)
//	select  -spec spec.json -index index.json -runs DIR -out DIR
//	cleanup -spec spec.json -index index.json -runs DIR -best DIR -out DIR
//
// and returns the exit status: 0, 1 on failure, 2 on a usage error,
// ExitNoRetry (3) when running it again cannot help (a diverged loss, data
// without enough labelled jobs, no completed run to choose from), and
// ExitCheckpoint (85) when a training run stopped after -checkpoint-every
// at the end of an epoch, its checkpoint stored in its run directory, to
// be started again. The
// local and Slurm backends start "train" through the sweep worker
// environment (Worker's out-of-process twin); the DAG's jobs run all five.
func RunNode(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "node: want a command: parse, train, check, select or cleanup")
		return 2
	}
	fs := flag.NewFlagSet("node "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		spec, out, data, model, index, runs, best, id, run, eventLog string
		ret, retry, maxRetries                                       int
		every                                                        time.Duration
		noTimeRetry                                                  bool
	)
	switch args[0] {
	case "parse":
		fs.StringVar(&spec, "spec", "spec.json", "the node spec (spec.json)")
		fs.StringVar(&out, "out", "dataset", "dataset directory to write")
	case "train":
		fs.StringVar(&data, "data", ".", "dataset directory (index.json and the shape's .npz)")
		fs.StringVar(&model, "model", "", "model directory to write (default: the run directory's model/)")
		fs.IntVar(&retry, "retry", -1, "on a DAG, the node's retry number (DAGMan's $(RETRY) through VARS): the run is attempt retry+1, and a failed attempt's result in the run directory is discarded first")
		fs.DurationVar(&every, "checkpoint-every", 0, fmt.Sprintf("on a DAG, stop at the end of the first epoch after this long, the checkpoint stored, and exit %d (the submit file's checkpoint_exit_code); 0: never", ExitCheckpoint))
	case "check":
		fs.IntVar(&ret, "return", 0, "the job's exit value (DAGMan's $RETURN)")
		fs.IntVar(&retry, "retry", -1, "the node's retry number, 0 on its first attempt (DAGMan's $RETRY); with -max-retries, the last attempt records a failed run instead of failing the node")
		fs.IntVar(&maxRetries, "max-retries", -1, "the node's RETRY count (DAGMan's $MAX_RETRIES)")
		fs.StringVar(&id, "id", "", "run id")
		fs.StringVar(&run, "run", "", "the run's result directory")
		fs.StringVar(&model, "model", "", "the run's model directory")
		fs.StringVar(&eventLog, "log", "", "the node's job event log (with -no-time-retry)")
		fs.BoolVar(&noTimeRetry, "no-time-retry", false, "record a run whose job was held for exceeding its time limit (hold code 46, in -log) as failed instead of retrying it")
	case "select", "cleanup":
		fs.StringVar(&spec, "spec", "spec.json", "the node spec (spec.json)")
		fs.StringVar(&index, "index", IndexFile, "the dataset's index.json")
		fs.StringVar(&runs, "runs", ".", "directory holding run_<id> and model_<id> of every run")
		fs.StringVar(&out, "out", "", "output directory")
		if args[0] == "cleanup" {
			fs.StringVar(&best, "best", "best", "the select node's output directory")
		}
	default:
		fmt.Fprintf(stderr, "node: unknown command %q (parse, train, check, select, cleanup)\n", args[0])
		return 2
	}
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "node %s: unexpected arguments %q\n", args[0], fs.Args())
		return 2
	}
	var err error
	switch args[0] {
	case "parse":
		var s *Spec
		if s, err = readNodeSpec(spec); err == nil {
			_, err = Parse(s, out, stdout)
		}
	case "train":
		err = nodeTrain(ctx, data, model, retry, every, stdout)
		if errors.Is(err, errCheckpoint) {
			fmt.Fprintf(stderr, "node train: %v\n", err)
			return ExitCheckpoint
		}
	case "check":
		// A failed job or what it left fails the node, so that DAGMan
		// retries it, except on the node's last attempt and for a run that
		// failed for good (its loss diverged): then the run is recorded as
		// failed and the node succeeds, so that select and cleanup run and
		// the search goes on without it, as on the other engines.
		var why string
		switch {
		case ret == ExitNoRetry:
			why = fmt.Sprintf("failed for good (exit %d)", ret)
		case ret != 0 && noTimeRetry && heldForTime(eventLog):
			why = fmt.Sprintf("held for exceeding its time limit (hold code %d); the spec's condor.time_retry is none", holdTimeLimit)
			ret = ExitNoRetry
		case ret != 0:
			why = fmt.Sprintf("the job exited %d", ret)
		default:
			if err := CheckRun(id, run, model); err != nil {
				why = err.Error()
			}
		}
		if why == "" {
			return 0
		}
		last := retry >= 0 && maxRetries >= 0 && retry >= maxRetries
		if ret != ExitNoRetry && !last {
			fmt.Fprintf(stderr, "node check: run %s: %s\n", id, why)
			return 1
		}
		if err := RecordFailed(run, id, why, max(retry, 0)+1); err != nil {
			fmt.Fprintf(stderr, "node check: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "node check: run %s: %s; recorded as failed (%s), the search goes on without it\n", id, why, FailedFile)
		return 0
	case "select":
		var b *BestModel
		if b, err = SelectDirs(spec, index, runs, out); err == nil {
			fmt.Fprintf(stdout, "best run %s: validation %s %v -> %s\n", b.Slug, b.Metric, b.Value, filepath.Join(out, BestInfoFile))
		}
	case "cleanup":
		err = Gather(ctx, spec, index, runs, best, out, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "node %s: %v\n", args[0], err)
		if errors.Is(err, lstm.ErrNaN) || errors.Is(err, ErrDataset) && args[0] == "parse" || errors.Is(err, ErrNoRun) || errors.Is(err, ErrFailedRuns) {
			return ExitNoRetry
		}
		return 1
	}
	return 0
}

// holdTimeLimit is HTCondor's HoldReasonCode of a job that ran longer
// than its allowed_job_duration.
const holdTimeLimit = 46

// heldForTime reports whether the last hold in a job event log is one for
// exceeding the time limit.
func heldForTime(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	evs, _ := eventlog.NewReader(f).ReadAll()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Code == eventlog.Held {
			hi, err := evs[i].HoldInfo()
			return err == nil && hi.HasCode && hi.Code == holdTimeLimit
		}
	}
	return false
}

// errCheckpoint ends a training job at a checkpoint (ExitCheckpoint).
var errCheckpoint = errors.New("stopped at a checkpoint to have it stored; start again to continue")

// epochLines calls then at the end of every line written: TrainRun's
// progress is one line per epoch, written before the epoch's checkpoint.
type epochLines struct {
	w    io.Writer
	then func()
}

func (e *epochLines) Write(p []byte) (int, error) {
	n, err := 0, error(nil)
	if e.w != nil {
		n, err = e.w.Write(p)
	} else {
		n = len(p)
	}
	if bytes.HasSuffix(p, []byte("\n")) {
		e.then()
	}
	return n, err
}

// nodeTrain trains the sweep task of the process's environment. retry ≥ 0
// is a DAG node's retry number: the run directory comes back with every
// attempt (it is the node's input and output), so the attempt is retry+1,
// a failed attempt's result there is removed before training, and the
// training continues from the checkpoint the directory holds. With every >
// 0 the training stops at the end of the first epoch after that long,
// once its checkpoint is stored, and returns errCheckpoint. The metric log
// is rewritten from the finished run's epochs, so that it holds each epoch
// once however often the run was stopped and continued.
func nodeTrain(ctx context.Context, data, model string, retry int, every time.Duration, progress io.Writer) error {
	t, ok, err := sweep.WorkerTask()
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("heldjobs: not started as a sweep worker (%s is not set)", sweep.EnvRunID)
	}
	if retry >= 0 {
		t.Attempt = retry + 1
		if err := os.Remove(filepath.Join(t.Dir, sweep.ResultFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("heldjobs: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopped := false
	if every > 0 {
		start := time.Now()
		progress = &epochLines{w: progress, then: func() {
			if time.Since(start) >= every {
				stopped = true
				cancel()
			}
		}}
	}
	res, err := TrainRun(ctx, t, data, model, progress)
	if stopped && errors.Is(err, context.Canceled) {
		return errCheckpoint
	}
	if err != nil {
		return err
	}
	if retry >= 0 {
		if err := rewriteMetrics(t.Dir, res); err != nil {
			return err
		}
	}
	// A worker process's whole CPU time (loading, training, scoring), for
	// the engines whose workers run elsewhere (Slurm, HTCondor).
	if cpu, ok := cputime.Self(); ok {
		res.Metrics["cpu_seconds"] = cpu.Seconds()
	}
	if rss, ok := cputime.PeakRSS(); ok {
		res.Metrics["peak_rss_bytes"] = float64(rss)
	}
	return sweep.WriteResult(t.Dir, res)
}

// rewriteMetrics writes the run directory's metric log anew from the
// result's series, epoch by epoch in TrainRun's order.
func rewriteMetrics(dir string, res *sweep.Result) error {
	if err := os.Remove(filepath.Join(dir, sweep.MetricFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("heldjobs: %w", err)
	}
	ml, err := sweep.OpenMetricLog(dir)
	if err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	names := seriesNames()
	for i := range res.Series[names[0]].Step {
		for _, name := range names {
			ser := res.Series[name]
			if err := ml.Log(name, ser.Step[i], ser.Value[i]); err != nil {
				ml.Close()
				return fmt.Errorf("heldjobs: %w", err)
			}
		}
	}
	if err := ml.Close(); err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	return nil
}

// gatherLogs copies the logs (*.log, *.out, *.err) in root and in its
// <node>.logs directories into dst.
func gatherLogs(root, dst string) error {
	isLog := func(n string) bool {
		return strings.HasSuffix(n, ".log") || strings.HasSuffix(n, ".out") || strings.HasSuffix(n, ".err")
	}
	var files []string
	ents, err := os.ReadDir(root)
	if err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	for _, e := range ents {
		switch n := e.Name(); {
		case e.Type().IsRegular() && isLog(n):
			files = append(files, filepath.Join(root, n))
		case e.IsDir() && strings.HasSuffix(n, ".logs"):
			sub, err := os.ReadDir(filepath.Join(root, n))
			if err != nil {
				return fmt.Errorf("heldjobs: %w", err)
			}
			for _, f := range sub {
				if f.Type().IsRegular() && isLog(f.Name()) {
					files = append(files, filepath.Join(root, n, f.Name()))
				}
			}
		}
	}
	if len(files) > 0 {
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return fmt.Errorf("heldjobs: %w", err)
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("heldjobs: %w", err)
		}
		if err := writeAtomic(filepath.Join(dst, filepath.Base(f)), b); err != nil {
			return err
		}
	}
	return nil
}

// failedRun is the content of FailedFile.
type failedRun struct {
	RunID   string `json:"run_id"`
	Error   string `json:"error"`
	Attempt int    `json:"attempt"` // the DAG node's last attempt, from 1
}

// FailedFile, in a run's result directory, records that the run failed for
// good on a DAG (its reason, as JSON): select and cleanup count the run as
// failed whatever else the directory holds.
const FailedFile = "failed.json"

// RecordFailed writes runDir/FailedFile for run id with the reason why and
// the number of the DAG node's attempt that failed last (its attempts).
func RecordFailed(runDir, id, why string, attempt int) error {
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	b, err := json.Marshal(failedRun{id, why, attempt})
	if err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	return writeAtomic(filepath.Join(runDir, FailedFile), append(b, '\n'))
}

// CheckRun checks what a training node left: a result of run id in
// runDir and a model directory that loads.
func CheckRun(id, runDir, modelDir string) error {
	res, err := sweep.ReadResult(runDir)
	if err != nil {
		return fmt.Errorf("heldjobs: run %s: %w", id, err)
	}
	if res.RunID != id {
		return fmt.Errorf("heldjobs: %s holds run %s, want %s", runDir, res.RunID, id)
	}
	if _, _, err := LoadModel(modelDir); err != nil {
		return fmt.Errorf("heldjobs: run %s: %w", id, err)
	}
	return nil
}

// dirRecords reads the runs of a DAG's search from run_<id> and model_<id>
// directories under root.
func dirRecords(specPath, indexPath, root string) (*Spec, *Dataset, []sweep.Point, []RunRecord, error) {
	s, err := readNodeSpec(specPath)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	d, err := ReadDataset(filepath.Dir(indexPath))
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if filepath.Base(indexPath) != IndexFile {
		return nil, nil, nil, nil, fmt.Errorf("heldjobs: %w: %s: want a file named %s", ErrDataset, indexPath, IndexFile)
	}
	_, pts, err := s.Sweep(d.ID)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	var runs []RunRecord
	for _, p := range pts {
		pt, err := PointOf(p.Params)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		r := RunRecord{ID: p.ID, Slug: p.Slug, State: sweep.Failed, Attempt: 1, Point: pt, Params: p.Params,
			Dir: filepath.Join(root, "run_"+p.ID), ModelDir: filepath.Join(root, "model_"+p.ID)}
		if b, err := os.ReadFile(filepath.Join(r.Dir, FailedFile)); err == nil {
			var f failedRun
			if json.Unmarshal(b, &f) != nil {
				f.Error = "(unreadable " + FailedFile + ")"
			}
			r.Error = fmt.Sprintf("node train_%s failed: %s", p.ID, f.Error)
			r.Attempt = max(f.Attempt, 1)
		} else if res, err := sweep.ReadResult(r.Dir); err == nil && res.RunID == p.ID {
			r.State, r.Result, r.Attempt = sweep.Completed, res, max(res.Attempt, 1)
		} else {
			r.Error = fmt.Sprintf("no result from node train_%s", p.ID)
		}
		runs = append(runs, r)
	}
	return s, d, pts, runs, nil
}

// SelectDirs is the select node: it chooses the best run (Select) among
// the run_<id> directories under root and writes bestmodel.info and
// bestmodel.json into out, naming the model as the cleanup node's tree
// will hold it (bestmodel/).
func SelectDirs(specPath, indexPath, root, out string) (*BestModel, error) {
	s, _, _, runs, err := dirRecords(specPath, indexPath, root)
	if err != nil {
		return nil, err
	}
	best := Select(runs, s.Metric)
	if best < 0 {
		return nil, fmt.Errorf("heldjobs: %w: none of the %d runs left a result", ErrNoRun, len(runs))
	}
	b := Best(s.Name, runs, best, s.Metric, BestDir)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("heldjobs: %w", err)
	}
	return b, WriteBest(out, b)
}

// Gather is the cleanup node: it lays out into out the tree a local Search
// writes. The runs' results, metric logs and models are imported into a
// new ledger (out/ledger.db, attempt directories under out/work: the
// ledger's times are those of the import, each run's own timing is in its
// metrics), the best run is chosen again from the ledger and must be the
// one the select node chose (bestDir), its model copied to out/bestmodel,
// bestmodel.info and .json written, the tracking tables exported, and the
// nodes' logs (*.log, *.out, *.err under root and in its <node>.logs
// directories) copied to out/logs.
func Gather(ctx context.Context, specPath, indexPath, root, bestDir, out string, progress io.Writer) error {
	s, d, pts, recs, err := dirRecords(specPath, indexPath, root)
	if err != nil {
		return err
	}
	chosen, err := ReadBest(bestDir)
	if err != nil {
		return err
	}
	out, err = filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(out, DatasetDir), 0o755); err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	ib, err := readFile(indexPath)
	if err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(out, DatasetDir, IndexFile), ib); err != nil {
		return err
	}
	ss, _, err := s.Sweep(d.ID)
	if err != nil {
		return err
	}
	l, err := sweep.OpenLedger(filepath.Join(out, LedgerFile))
	if err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	defer l.Close()
	if _, err := l.Enqueue(ctx, ss, slices.Values(pts)); err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	byID := map[string]*RunRecord{}
	for i := range recs {
		byID[recs[i].ID] = &recs[i]
	}
	// Each run is imported with the DAG node's attempts: an attempt before
	// the one that ended the node is recorded as failed (its output and
	// error are in logs/), so that the ledger's attempt is the one
	// result.json names.
	importRun := func(ctx context.Context, t sweep.Task) (*sweep.Result, error) {
		r := byID[t.RunID]
		switch {
		case r == nil:
			return nil, fmt.Errorf("heldjobs: DAG node train_%s left no result", t.RunID)
		case t.Attempt < r.Attempt:
			return nil, fmt.Errorf("heldjobs: attempt %d of DAG node train_%s failed; its output and error are logs/train_%s.retry%d.*", t.Attempt, t.RunID, t.RunID, t.Attempt-1)
		case r.Result == nil:
			return nil, fmt.Errorf("heldjobs: %s", cmp.Or(r.Error, "DAG node train_"+t.RunID+" left no result"))
		}
		if b, err := os.ReadFile(filepath.Join(r.Dir, sweep.MetricFile)); err == nil {
			if err := writeAtomic(filepath.Join(t.Dir, sweep.MetricFile), b); err != nil {
				return nil, err
			}
		}
		if err := copyDir(r.ModelDir, filepath.Join(t.Dir, ModelDirName)); err != nil {
			return nil, err
		}
		res := *r.Result
		res.RunID, res.Attempt = t.RunID, t.Attempt
		return &res, nil
	}
	work := filepath.Join(out, WorkDir)
	// No retry by the controller: the runs that had more attempts on the
	// DAG are requeued until their ledger attempt is the DAG's.
	c := &sweep.Controller{Ledger: l, Backend: &sweep.Local{Func: importRun}, WorkDir: work, Parallel: 4,
		Retry: map[sweep.Class]int{}}
	for {
		if _, err := c.Run(ctx); err != nil {
			return fmt.Errorf("heldjobs: %w", err)
		}
		var again []string
		for _, r := range recs {
			lr, err := l.Get(ctx, r.ID)
			if err != nil {
				return fmt.Errorf("heldjobs: %w", err)
			}
			if lr.State == sweep.Failed && lr.Attempt < r.Attempt {
				again = append(again, r.ID)
			}
		}
		if len(again) == 0 {
			break
		}
		if _, err := l.Requeue(ctx, again, nil, false); err != nil {
			return fmt.Errorf("heldjobs: %w", err)
		}
	}
	runs, err := ledgerRecords(ctx, l, work, pts)
	if err != nil {
		return err
	}
	best := Select(runs, s.Metric)
	if best < 0 {
		return fmt.Errorf("heldjobs: %w: no run of the DAG completed", ErrNoRun)
	}
	if runs[best].ID != chosen.RunID {
		return fmt.Errorf("heldjobs: the ledger's best run is %s, the select node chose %s", runs[best].Slug, chosen.Slug)
	}
	if err := replaceDir(runs[best].ModelDir, filepath.Join(out, BestDir)); err != nil {
		return err
	}
	if err := WriteBest(out, Best(s.Name, runs, best, s.Metric, BestDir)); err != nil {
		return err
	}
	if err := Track(ctx, l, runs, best, filepath.Join(out, TrackingDir)); err != nil {
		return err
	}
	if err := gatherLogs(root, filepath.Join(out, "logs")); err != nil {
		return err
	}
	if progress != nil {
		fmt.Fprintf(progress, "gathered %d runs into %s; best %s\n", len(runs), out, runs[best].Slug)
	}
	return failedRuns(s, runs)
}
