package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/crosscluster/crosscluster/examples/heldjobs/internal/heldjobs"
	"github.com/crosscluster/crosscluster/internal/dagman"
	"github.com/crosscluster/crosscluster/internal/pathlist"
	cplot "github.com/crosscluster/crosscluster/internal/plot"
	"github.com/crosscluster/crosscluster/sweep"
	"github.com/crosscluster/crosscluster/sweep/slurm"
)

// The held-job pipeline (package heldjobs): -spec runs a search spec on a
// backend, -model with -logs decides the jobs on hold in new logs, and
// "node ..." is the command line of the DAG's jobs and of the process and
// Slurm workers.

// curvesFile is the validation-curve comparison a search leaves in its
// output tree.
const curvesFile = "curves.png"

// nodeMain runs a node command; after a cleanup it also draws the
// validation curves into the gathered tree.
func nodeMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	code := heldjobs.RunNode(ctx, args, stdout, stderr)
	if code == 0 && len(args) > 0 && args[0] == "cleanup" {
		out := ""
		for i, a := range args {
			if (a == "-out" || a == "--out") && i+1 < len(args) {
				out = args[i+1]
			} else if v, ok := strings.CutPrefix(a, "-out="); ok {
				out = v
			}
		}
		if err := drawCurves(ctx, out); err != nil {
			fmt.Fprintln(stderr, "node cleanup:", err)
			return 1
		}
	}
	return code
}

// drawCurves draws every run's validation curve of the search's metric,
// the best run highlighted, into dir/curves.png.
func drawCurves(ctx context.Context, dir string) error {
	curves, best, m, err := heldjobs.ReadCurves(ctx, dir)
	if err != nil {
		return err
	}
	rc := make([]cplot.RunCurve, len(curves))
	for i, c := range curves {
		rc[i] = cplot.RunCurve{Name: c.Slug, Epoch: c.Epoch, Value: c.Value, Kept: c.Kept}
	}
	return cplot.ValidationCurves(filepath.Join(dir, curvesFile), fmt.Sprintf("validation %s of every run", m), "validation "+string(m), rc, best)
}

// specError names the spec file after the package's own prefix
// ("heldjobs: search.yaml: spec key ..."), not before it.
type specError struct {
	file string
	err  error
}

func (e specError) Error() string {
	return "heldjobs: " + e.file + ": " + strings.TrimPrefix(e.err.Error(), "heldjobs: ")
}

func (e specError) Unwrap() error { return e.err }

// runSpec runs the search of -spec on -backend.
func runSpec(ctx context.Context, o options, stdout io.Writer) error {
	f, err := os.Open(o.spec)
	if err != nil {
		return err
	}
	spec, err := heldjobs.LoadSpec(f)
	f.Close()
	if err != nil {
		return specError{o.spec, err}
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	out, err := filepath.Abs(o.out)
	if err != nil {
		return err
	}
	if o.backend == "condor" || o.backend == "condor-local" {
		return runCondor(ctx, o, spec, exe, out, stdout)
	}
	s := &heldjobs.Search{Spec: spec, Out: out, Parallel: o.workers, Progress: stdout, Dashboard: o.dashboard}
	data := filepath.Join(out, heldjobs.DatasetDir)
	switch o.backend {
	case "local":
		s.Backend = &sweep.Local{Func: heldjobs.Worker(data, nil)}
		s.PollInterval = 50 * time.Millisecond
	case "process":
		s.Backend = &sweep.Local{Command: []string{exe, "node", "train", "-data", data}, StateDir: filepath.Join(out, "launch")}
		s.PollInterval = 100 * time.Millisecond
	case "slurm":
		s.Backend = &slurm.Backend{Command: []string{exe, "node", "train", "-data", data}, Dir: filepath.Join(out, "slurm"),
			Name: "heldjobs", MaxParallel: o.workers}
		// Slurm throttles the array; the controller submits every run.
		s.Parallel = max(spec.Space.Size(), spec.Random)
		s.PollInterval = 500 * time.Millisecond
	default:
		return fmt.Errorf("unknown -backend %q (local, process, slurm, condor, condor-local)", o.backend)
	}
	oc, err := s.Run(ctx)
	if errors.Is(err, heldjobs.ErrFailedRuns) {
		// The outputs are written; show the table before the error.
		printRuns(stdout, oc.Runs, oc.Best, spec.Metric)
	}
	if err != nil {
		return err
	}
	printRuns(stdout, oc.Runs, oc.Best, spec.Metric)
	if err := drawCurves(ctx, out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "search done in %s: %s, %s, %s, tracking/ and %s in %s\n", oc.Elapsed.Round(time.Millisecond),
		heldjobs.BestInfoFile, heldjobs.BestJSONFile, heldjobs.BestDir+"/", curvesFile, out)
	return nil
}

// runCondor writes the search as an HTCondor DAG into -out/condor; with
// -backend condor-local it also runs the DAG on this machine.
func runCondor(ctx context.Context, o options, spec *heldjobs.Spec, exe, out string, stdout io.Writer) error {
	c := &heldjobs.Condor{Spec: spec, Dir: filepath.Join(out, "condor"), Executable: exe, AllowDynamic: o.backend == "condor-local"}
	files, err := c.Write()
	if se := (*heldjobs.SpecError)(nil); errors.As(err, &se) {
		return specError{o.spec, err}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote the DAG %s (%d training nodes); submit it on an access point with\n  condor_submit_dag -usedagdir %s\n",
		files.DAG, len(files.Runs), files.DAG)
	if o.backend != "condor-local" {
		return nil
	}
	start := time.Now()
	sum, err := dagman.Run(ctx, files.DAG, dagman.Config{Parallel: o.workers, Progress: stdout})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ran the DAG here in %s: %d nodes done, %d retried; results in %s\n",
		time.Since(start).Round(time.Millisecond), len(sum.Done), sum.Retried, files.Results)
	return nil
}

// printRuns prints the runs sorted as Select ranks them, best first.
func printRuns(w io.Writer, runs []heldjobs.RunRecord, best int, m heldjobs.Metric) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\tslug\tstate\tattempt\tepochs\tkept\tvalid %s\tvalid loss\ttest F1\tseconds\t\n", m)
	for i, r := range runs {
		mark := ""
		if i == best {
			mark = "*"
		}
		get := func(k string) float64 {
			if r.Result == nil {
				return 0
			}
			return r.Result.Metrics[k]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.0f\t%.0f\t%.4f\t%.4f\t%.4f\t%.1f\t\n", mark, r.Slug, r.State, r.Attempt,
			get("epochs"), get("best_epoch"), get(m.Key()), get("valid_loss"), get("test_f1"), get("seconds"))
	}
	tw.Flush()
	for _, r := range runs {
		if r.State == sweep.Pruned {
			fmt.Fprintf(w, "pruned %s: %s\n", r.Slug, r.Error)
		}
	}
}

// runDecide decides every job on hold in -logs with the model of -model
// and writes -out/decisions.csv.
func runDecide(o options, stdout io.Writer) error {
	m, info, err := heldjobs.LoadModel(o.model)
	if err != nil {
		return err
	}
	jobs, err := heldjobs.ReadLogs(pathlist.Split(o.logs))
	if err != nil {
		return err
	}
	ds, err := heldjobs.Decide(m, info, jobs)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write([]string{"job", "source", "held_at", "hold_code", "decision", "p_release"})
	released := 0
	for _, d := range ds {
		dec := "remove"
		if d.Release {
			dec = "release"
			released++
		}
		w.Write([]string{d.Job.JobID.String(), d.Job.Source, d.HeldAt.UTC().Format(time.RFC3339), strconv.Itoa(d.HoldCode), dec,
			strconv.FormatFloat(d.P, 'f', 6, 64)})
	}
	w.Flush()
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	path := filepath.Join(o.out, "decisions.csv")
	if err := writeFile(path, func(b *bytes.Buffer) error { _, err := b.Write(buf.Bytes()); return err }); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d jobs on hold in %d jobs: %d release, %d remove (model %s, run %s, threshold %g) -> %s\n",
		len(ds), len(jobs), released, len(ds)-released, o.model, info.Slug, info.Threshold, path)
	return nil
}
