package heldjobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/crosscluster/crosscluster/sweep"
	"github.com/crosscluster/crosscluster/sweep/dashboard"
)

// The layout of a search's output directory.
const (
	DatasetDir  = "dataset"   // Parse's output
	LedgerFile  = "ledger.db" // the sweep ledger
	WorkDir     = "work"      // the runs' attempt directories
	BestDir     = "bestmodel" // a copy of the best run's model directory
	TrackingDir = "tracking"  // the exported runs and epochs tables
)

// Search runs a search on a sweep backend: it builds the dataset (Parse)
// into Out/dataset, enqueues one ledger run per point of the spec in
// Out/ledger.db, drives them through Backend (in this process, as worker
// processes, or on Slurm) with a retry budget of Spec.Retries for runs
// that fail for a reason other than their data, then chooses the best run
// (Select), copies its model to Out/bestmodel, writes bestmodel.info and
// bestmodel.json in Out and exports the tracking tables (Track).
//
// Running it again with the same spec and Out resumes: completed runs are
// kept, runs a killed or interrupted invocation left behind are adopted or
// run again, and only what is missing is trained. The Backend's workers run
// TrainRun with the dataset directory Out/dataset (see Worker).
type Search struct {
	Spec    *Spec
	Out     string
	Backend sweep.Backend
	// Parallel bounds the runs in flight; ≤ 0 means 1.
	Parallel int
	// PollInterval is the controller's pause between polls; 0 means 200 ms.
	PollInterval time.Duration
	// Progress, when not nil, receives a line per step and per run.
	Progress io.Writer
	// Dashboard, when not empty, is the address ("127.0.0.1:8080"; a bare
	// ":8080" listens on 127.0.0.1) at which sweep/dashboard serves the
	// ledger while the runs go; its URL goes to Progress.
	Dashboard string
}

// Outcome is what a search produced.
type Outcome struct {
	Dataset *Dataset
	Ledger  string
	Runs    []RunRecord // the spec's points, in grid order
	Best    int         // index into Runs; -1 when no run completed
	Model   *BestModel
	Sweep   sweep.Summary
	Elapsed time.Duration
}

// retryPolicy gives every failure class the spec's budget, except a
// diverged run (NaN loss), which fails the same way every time from the
// same seed.
func retryPolicy(n int) map[sweep.Class]int {
	return map[sweep.Class]int{
		sweep.ClassOOM: n, sweep.ClassTimeout: n, sweep.ClassInfrastructure: n, sweep.ClassCorrupt: n,
		sweep.ClassUnknown: n, sweep.ClassDivergence: 0,
	}
}

// Run runs the search; see Search.
func (s *Search) Run(ctx context.Context) (*Outcome, error) {
	if s.Spec == nil || s.Out == "" || s.Backend == nil {
		panic("heldjobs: Search needs Spec, Out and Backend")
	}
	start := time.Now()
	say := func(format string, a ...any) {
		if s.Progress != nil {
			fmt.Fprintf(s.Progress, format+"\n", a...)
		}
	}
	out, err := filepath.Abs(s.Out)
	if err != nil {
		return nil, fmt.Errorf("heldjobs: %w", err)
	}
	ds, err := Parse(s.Spec, filepath.Join(out, DatasetDir), s.Progress)
	if err != nil {
		return nil, err
	}
	ss, pts, err := s.Spec.Sweep(ds.ID)
	if err != nil {
		return nil, err
	}
	l, err := sweep.OpenLedger(filepath.Join(out, LedgerFile))
	if err != nil {
		return nil, fmt.Errorf("heldjobs: %w", err)
	}
	defer l.Close()
	added, err := l.Enqueue(ctx, ss, slices.Values(pts))
	if err != nil {
		return nil, fmt.Errorf("heldjobs: %w", err)
	}
	mode := "grid"
	switch {
	case len(s.Spec.Space.Dists) > 0:
		mode = fmt.Sprintf("%d random draws", s.Spec.Random)
	case s.Spec.Random > 0:
		mode = fmt.Sprintf("%d draws from a grid of %d", s.Spec.Random, s.Spec.Space.Size())
	}
	say("search %q (%s): %d runs, %d new, ledger %s", s.Spec.Name, mode, len(pts), added, l.Path())
	work := filepath.Join(out, WorkDir)
	c := &sweep.Controller{Ledger: l, Backend: s.Backend, WorkDir: work, Parallel: max(s.Parallel, 1),
		PollInterval: s.PollInterval, Retry: retryPolicy(s.Spec.Retries), Progress: s.Progress,
		Pruner: s.Spec.Prune.pruner(s.Spec.Metric, s.Spec.Epochs)}
	if s.Dashboard != "" {
		stop, err := s.serve(l.Path(), say)
		if err != nil {
			return nil, err
		}
		defer stop()
	}
	sum, err := c.Run(ctx)
	if err != nil {
		return nil, fmt.Errorf("heldjobs: %w", err)
	}
	runs, err := ledgerRecords(ctx, l, work, pts)
	if err != nil {
		return nil, err
	}
	oc := &Outcome{Dataset: ds, Ledger: l.Path(), Runs: runs, Best: Select(runs, s.Spec.Metric), Sweep: sum}
	if oc.Best < 0 {
		return oc, fmt.Errorf("heldjobs: %w: no run of the search completed (see %s)", ErrNoRun, l.Path())
	}
	b := &runs[oc.Best]
	if err := replaceDir(b.ModelDir, filepath.Join(out, BestDir)); err != nil {
		return oc, err
	}
	oc.Model = Best(s.Spec.Name, runs, oc.Best, s.Spec.Metric, BestDir)
	if err := WriteBest(out, oc.Model); err != nil {
		return oc, err
	}
	say("best run %s: validation %s %.4f at epoch %d; test F1 %.4f [%.4f, %.4f] -> %s",
		b.Slug, s.Spec.Metric, oc.Model.Value, oc.Model.Epoch, b.metric("test_f1"), b.metric("test_f1_lo"), b.metric("test_f1_hi"),
		filepath.Join(out, BestInfoFile))
	if err := Track(ctx, l, runs, oc.Best, filepath.Join(out, TrackingDir)); err != nil {
		return oc, err
	}
	oc.Elapsed = time.Since(start)
	return oc, failedRuns(s.Spec, runs)
}

// serve puts sweep/dashboard up over a read-only view of the ledger at
// s.Dashboard; stop closes it.
func (s *Search) serve(ledger string, say func(string, ...any)) (stop func(), err error) {
	addr := s.Dashboard
	if strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr
	}
	ro, err := sweep.OpenLedgerReadOnly(ledger)
	if err != nil {
		return nil, fmt.Errorf("heldjobs: dashboard: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		ro.Close()
		return nil, fmt.Errorf("heldjobs: dashboard: %w", err)
	}
	m := s.Spec.Metric
	srv := &http.Server{Handler: dashboard.New(ro, dashboard.Options{Metric: m.Key(), HigherIsBetter: !m.Lower()}), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	say("dashboard: http://%s/", ln.Addr())
	return func() {
		srv.Close()
		ro.Close()
	}, nil
}

// ErrNoRun reports a search in which no run completed.
var ErrNoRun = errors.New("no completed run")

// ErrFailedRuns reports a search some of whose runs failed for good, when
// its spec does not allow that (Spec.AllowFailed).
var ErrFailedRuns = errors.New("runs failed for good")

// failedRuns returns an error wrapping ErrFailedRuns that names the runs
// that did not complete, or nil when all did or the spec allows failures.
func failedRuns(s *Spec, runs []RunRecord) error {
	if s.AllowFailed {
		return nil
	}
	var bad []string
	for _, r := range runs {
		if r.State != sweep.Completed && r.State != sweep.Pruned {
			why := r.Error
			if why == "" {
				why = string(r.State)
			}
			bad = append(bad, fmt.Sprintf("%s (%s)", r.Slug, why))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("heldjobs: %w: %d of %d: %s; the best of the others was chosen and written, set allow_failed: true in the spec to accept that",
		ErrFailedRuns, len(bad), len(runs), strings.Join(bad, "; "))
}

// ledgerRecords reads the records of the points from the ledger and their
// attempt directories.
func ledgerRecords(ctx context.Context, l *sweep.Ledger, work string, pts []sweep.Point) ([]RunRecord, error) {
	var out []RunRecord
	for _, p := range pts {
		run, err := l.Get(ctx, p.ID)
		if err != nil {
			return nil, fmt.Errorf("heldjobs: %w", err)
		}
		pt, err := PointOf(run.Params())
		if err != nil {
			return nil, err
		}
		dir := sweep.AttemptDir(work, p.ID, run.Attempt)
		r := RunRecord{ID: p.ID, Slug: p.Slug, State: run.State, Attempt: run.Attempt, Point: pt, Params: run.Params(),
			Dir: dir, ModelDir: filepath.Join(dir, ModelDirName), Error: run.ErrorText}
		if run.State == sweep.Completed {
			if r.Result, err = sweep.ReadResult(dir); err != nil {
				return nil, fmt.Errorf("heldjobs: run %s: %w", p.Slug, err)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// Worker returns an in-process worker for sweep.Local: each task trains
// with TrainRun on the dataset in dataDir.
func Worker(dataDir string, progress io.Writer) func(context.Context, sweep.Task) (*sweep.Result, error) {
	return func(ctx context.Context, t sweep.Task) (*sweep.Result, error) {
		return TrainRun(ctx, t, dataDir, "", progress)
	}
}

// copyDir copies the regular files of src into dst (created), replacing
// dst's files of the same names.
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("heldjobs: %w", err)
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("heldjobs: %w", err)
		}
		return writeAtomic(target, b)
	})
}

// replaceDir makes dst a copy of src (its regular files and directories)
// in a way that a reader of dst never sees files of two copies mixed: the
// copy is made in a temporary sibling ".NAME.new-*", the old dst is renamed
// aside to ".NAME.old-*", the copy is renamed to dst, and the old one is
// removed. A process killed
//   - during the copy leaves dst as it was and a partial .NAME.new-*;
//   - between the two renames leaves no dst, the old copy whole in
//     .NAME.old-* and the new one whole in .NAME.new-*;
//   - after the second rename leaves the new dst and, until it is removed,
//     the old copy in .NAME.old-*.
//
// Each replaceDir of dst first removes the siblings an earlier one left.
// On an error dst is as it was (or, if the second rename failed, back from
// .NAME.old-*).
func replaceDir(src, dst string) error {
	parent, base := filepath.Split(filepath.Clean(dst))
	parent = filepath.Clean(parent)
	for _, pat := range []string{"." + base + ".new-*", "." + base + ".old-*"} {
		left, _ := filepath.Glob(filepath.Join(parent, pat))
		for _, l := range left {
			if err := os.RemoveAll(l); err != nil {
				return fmt.Errorf("heldjobs: %w", err)
			}
		}
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+base+".new-")
	if err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("heldjobs: %w", err)
	}
	if err := copyDir(src, tmp); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	old := ""
	if _, err := os.Lstat(dst); err == nil {
		// The name is made unique by MkdirTemp, then freed for the rename.
		if old, err = os.MkdirTemp(parent, "."+base+".old-"); err == nil {
			if err = os.Remove(old); err == nil {
				err = os.Rename(dst, old)
			}
		}
		if err != nil {
			os.RemoveAll(tmp)
			return fmt.Errorf("heldjobs: %w", err)
		}
	}
	if err := os.Rename(tmp, dst); err != nil {
		if old != "" {
			os.Rename(old, dst)
		}
		os.RemoveAll(tmp)
		return fmt.Errorf("heldjobs: %w", err)
	}
	if old != "" {
		os.RemoveAll(old) // a leftover is removed by the next replaceDir
	}
	return nil
}

func readFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("heldjobs: %w", err)
	}
	return b, nil
}
