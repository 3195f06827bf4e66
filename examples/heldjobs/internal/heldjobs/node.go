package heldjobs

import (
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

	"github.com/crosscluster/crosscluster/internal/cputime"
	"github.com/crosscluster/crosscluster/lstm"
	"github.com/crosscluster/crosscluster/sweep"
)

// RunNode runs one node command of the pipeline, the command line after
// "node" (a program calls it when its first argument is "node"):
//
//	parse   -spec spec.json -out DIR              build the dataset (Parse)
//	train   -data DIR [-model DIR]                train the sweep task of the environment (TrainRun)
//	check   -return N [-retry N -max-retries N] -id RUN -run DIR -model DIR
//	                                              a training node's POST script (on the last retry a failed run is recorded, FailedFile)
//	select  -spec spec.json -index index.json -runs DIR -out DIR
//	cleanup -spec spec.json -index index.json -runs DIR -best DIR -out DIR
//
// and returns the exit status: 0, 1 on failure, 2 on a usage error, and
// ExitNoRetry (3) when running it again cannot help (a diverged loss, data
// without enough labelled jobs, no completed run to choose from). The
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
		spec, out, data, model, index, runs, best, id, run string
		ret, retry, maxRetries                             int
	)
	switch args[0] {
	case "parse":
		fs.StringVar(&spec, "spec", "spec.json", "the node spec (spec.json)")
		fs.StringVar(&out, "out", "dataset", "dataset directory to write")
	case "train":
		fs.StringVar(&data, "data", ".", "dataset directory (index.json and the shape's .npz)")
		fs.StringVar(&model, "model", "", "model directory to write (default: the run directory's model/)")
		fs.IntVar(&retry, "retry", -1, "on a DAG, the node's retry number (DAGMan's $(RETRY) through VARS): the run is attempt retry+1, and a failed attempt's metric log and result in the run directory are discarded first")
	case "check":
		fs.IntVar(&ret, "return", 0, "the job's exit value (DAGMan's $RETURN)")
		fs.IntVar(&retry, "retry", -1, "the node's retry number, 0 on its first attempt (DAGMan's $RETRY); with -max-retries, the last attempt records a failed run instead of failing the node")
		fs.IntVar(&maxRetries, "max-retries", -1, "the node's RETRY count (DAGMan's $MAX_RETRIES)")
		fs.StringVar(&id, "id", "", "run id")
		fs.StringVar(&run, "run", "", "the run's result directory")
		fs.StringVar(&model, "model", "", "the run's model directory")
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
		err = nodeTrain(ctx, data, model, retry, stdout)
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
		if err := RecordFailed(run, id, why); err != nil {
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

// nodeTrain trains the sweep task of the process's environment. retry ≥ 0
// is a DAG node's retry number: the run directory comes back with every
// attempt (it is the node's input and output), so the attempt is retry+1
// and what a failed attempt left there (its metric log, its result) is
// removed before training, so that the metric log holds this attempt's
// epochs only.
func nodeTrain(ctx context.Context, data, model string, retry int, progress io.Writer) error {
	t, ok, err := sweep.WorkerTask()
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("heldjobs: not started as a sweep worker (%s is not set)", sweep.EnvRunID)
	}
	if retry >= 0 {
		t.Attempt = retry + 1
		for _, f := range []string{sweep.MetricFile, sweep.ResultFile} {
			if err := os.Remove(filepath.Join(t.Dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("heldjobs: %w", err)
			}
		}
	}
	res, err := TrainRun(ctx, t, data, model, progress)
	if err != nil {
		return err
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

// FailedFile, in a run's result directory, records that the run failed for
// good on a DAG (its reason, as JSON): select and cleanup count the run as
// failed whatever else the directory holds.
const FailedFile = "failed.json"

// RecordFailed writes runDir/FailedFile for run id with the reason why.
func RecordFailed(runDir, id, why string) error {
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	b, err := json.Marshal(struct {
		RunID string `json:"run_id"`
		Error string `json:"error"`
	}{id, why})
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
			var f struct {
				Error string `json:"error"`
			}
			if json.Unmarshal(b, &f) != nil {
				f.Error = "(unreadable " + FailedFile + ")"
			}
			r.Error = fmt.Sprintf("node train_%s failed: %s", p.ID, f.Error)
		} else if res, err := sweep.ReadResult(r.Dir); err == nil && res.RunID == p.ID {
			r.State, r.Result = sweep.Completed, res
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
// nodes' logs (*.log, *.out, *.err under root) copied to out/logs.
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
	importRun := func(ctx context.Context, t sweep.Task) (*sweep.Result, error) {
		r := byID[t.RunID]
		if r == nil || r.Result == nil {
			return nil, fmt.Errorf("heldjobs: DAG node train_%s left no result", t.RunID)
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
	c := &sweep.Controller{Ledger: l, Backend: &sweep.Local{Func: importRun}, WorkDir: work, Parallel: 4}
	if _, err := c.Run(ctx); err != nil {
		return fmt.Errorf("heldjobs: %w", err)
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
	ents, err := os.ReadDir(root)
	if err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	for _, e := range ents {
		n := e.Name()
		if e.Type().IsRegular() && (strings.HasSuffix(n, ".log") || strings.HasSuffix(n, ".out") || strings.HasSuffix(n, ".err")) {
			b, err := os.ReadFile(filepath.Join(root, n))
			if err != nil {
				return fmt.Errorf("heldjobs: %w", err)
			}
			if err := os.MkdirAll(filepath.Join(out, "logs"), 0o755); err != nil {
				return fmt.Errorf("heldjobs: %w", err)
			}
			if err := writeAtomic(filepath.Join(out, "logs", n), b); err != nil {
				return err
			}
		}
	}
	if progress != nil {
		fmt.Fprintf(progress, "gathered %d runs into %s; best %s\n", len(runs), out, runs[best].Slug)
	}
	return failedRuns(s, runs)
}
