// Command overlap runs the cross-cluster overlap workflow end to end: it
// reads (or generates) two clusters' job tables, labels workload regimes,
// keeps one regime, picks the safe features, fits the source-vs-target
// domain classifier and writes the report.
//
// By default the two clusters are synthetic (internal/synth): an Anvil-like
// source and a Conte-like target with GPU and memory telemetry, so every
// regime occurs. With -source and -target it reads FRESCO-style telemetry
// tables (.csv or .parquet) or TACC Stampede accounting CSVs (recognised by
// their jobID header):
//
//	go run ./examples/overlap -out out/overlap
//	go run ./examples/overlap -out out/stampede -regime all \
//	    -source ../shared/testdata/fresco/stampede_feb_2018_job_accounting.csv \
//	    -target ../shared/testdata/fresco/stampede_mar_2018_job_accounting.csv
//
// The features are the safe set (no missing value in either cluster, not
// constant) unless -features names them; then -impute median-imputes their
// missing values. -units gives file tables' timelimit units per cluster
// (Stampede's minutes are known).
//
// It writes report.md, report.json, propensity_<source>.png and
// propensity_<target>.png (histograms with the band marked; _source and
// _target are appended when the two names coincide), sweep.csv
// (coverage over the default bands), propensity.csv (every job's propensity
// and in-band flag, for the transfer evaluation), and appends its row to
// experiments.jsonl, rendered as experiments.md.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/crosscluster/crosscluster/internal/cputime"
	"github.com/crosscluster/crosscluster/internal/synth"
	"github.com/crosscluster/crosscluster/overlap"
	cplot "github.com/crosscluster/crosscluster/plot"
	"github.com/crosscluster/crosscluster/regime"
	"github.com/crosscluster/crosscluster/stats"
)

type options struct {
	out, source, target, sourceName, targetName string
	regime, band, exp, featureSet, features     string
	units                                       string
	n, crossfit                                 int
	seed                                        uint64
	balanced, proxy, strict, impute, transfer   bool
}

// newFlags defines the flags on o.
func newFlags(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("overlap", flag.ExitOnError)
	fs.StringVar(&o.out, "out", "out/overlap", "output directory (e.g. -out /tmp/ov)")
	fs.StringVar(&o.source, "source", "", "source job table (.csv, .parquet, or Stampede accounting .csv); default synthetic Anvil-like (e.g. -source anvil.parquet)")
	fs.StringVar(&o.target, "target", "", "target job table; default synthetic Conte-like (e.g. -target conte.csv)")
	fs.StringVar(&o.sourceName, "source-name", "", "source cluster name (default from the file or profile) (e.g. -source-name anvil)")
	fs.StringVar(&o.targetName, "target-name", "", "target cluster name (e.g. -target-name conte)")
	fs.StringVar(&o.regime, "regime", "cpu_standard", "workload regime to compare (cpu_standard, cpu_largemem, gpu_standard, gpu_largemem, unknown, or all) (e.g. -regime gpu_standard)")
	fs.StringVar(&o.band, "band", "0.2,0.8", "propensity band lo,hi (inclusive) (e.g. -band 0.1,0.9)")
	fs.StringVar(&o.exp, "exp", "", "experiment id for the log (default E<k> with k the next row) (e.g. -exp E7)")
	fs.StringVar(&o.featureSet, "feature-set", "", "feature set name in the report (default safe, or custom with -features) (e.g. -feature-set safe-v2)")
	fs.StringVar(&o.features, "features", "", "comma-separated features to fit instead of the safe set (NaN values then need -impute) (e.g. -features ncores,runtime_sec)")
	fs.StringVar(&o.units, "units", "", "timelimit units of file tables as cluster=seconds,... (added to stampede=60) (e.g. -units conte=60)")
	fs.IntVar(&o.n, "n", 20000, "jobs per synthetic cluster (e.g. -n 5000)")
	fs.IntVar(&o.crossfit, "crossfit", 5, "folds of the cross-fitted AUC (0: none) (e.g. -crossfit 10)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic clusters and the cross-fit folds (e.g. -seed 7)")
	fs.BoolVar(&o.balanced, "balanced", false, "class_weight=balanced instead of none (e.g. -balanced)")
	fs.BoolVar(&o.proxy, "proxy", false, "label regimes by the telemetry proxy rule only (ignore hardware tables) (e.g. -proxy)")
	fs.BoolVar(&o.strict, "strict", false, "proxy rule: all-missing GPU telemetry gives unknown (e.g. -strict)")
	fs.BoolVar(&o.impute, "impute", false, "median-impute non-finite feature values instead of failing (e.g. -impute)")
	fs.BoolVar(&o.transfer, "transfer", false, "also evaluate a transfer model: a logistic model of \"ran over an hour\" (runtime_sec > 3600) from ncores, nhosts and timelimit_sec, fitted on the source and scored (ROC AUC) on all, in-band and out-of-band target jobs with bootstrap intervals (e.g. -transfer)")
	return fs
}

// command returns the flags that reproduce o (every setting, defaults
// included, so that the record does not depend on future defaults).
func (o options) command() []string {
	cmd := []string{"go", "run", "./examples/overlap"}
	var tmp options
	fs := newFlags(&tmp) // the flags point into tmp ...
	tmp = o              // ... which now holds o's values
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "out" || f.Name == "exp" {
			return
		}
		v := f.Value.String()
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			if v == "true" {
				cmd = append(cmd, "-"+f.Name)
			}
			return
		}
		if v != "" {
			cmd = append(cmd, "-"+f.Name, v)
		}
	})
	return cmd
}

func main() {
	var o options
	fs := newFlags(&o)
	fs.Parse(os.Args[1:])
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, errorLine(err))
		os.Exit(1)
	}
}

// errorLine is the message main prints for err: prefixed with the
// command's name once (the overlap package's errors already start with
// "overlap: ").
func errorLine(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, "overlap: ") {
		return msg
	}
	return "overlap: " + msg
}

// run does the work; everything it prints goes to stdout.
func run(o options, stdout io.Writer) error {
	start := time.Now()
	band, err := parseBand(o.band)
	if err != nil {
		return err
	}
	units, err := parseUnits(o.units)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	if o.source == "" {
		o.sourceName, o.targetName = nameOr(o.sourceName, "anvil"), nameOr(o.targetName, "conte")
	} else {
		o.sourceName, o.targetName = nameOr(o.sourceName, o.source), nameOr(o.targetName, o.target)
	}
	var warnings []string
	warn := func(w string) {
		warnings = append(warnings, w)
		fmt.Fprintln(stdout, "warning:", w)
	}
	src, tgt, hw, inputs, err := load(o, units, stdout, warn)
	if err != nil {
		return err
	}
	for _, in := range []struct {
		name string
		jobs []regime.Job
	}{{o.sourceName, src}, {o.targetName, tgt}} {
		if len(in.jobs) == 0 {
			return fmt.Errorf("%w: %s has no jobs; nothing was written to the experiment log", overlap.ErrEmptyDomain, in.name)
		}
	}
	if o.proxy {
		hw = nil
	}
	rules := regime.Rules{Hardware: hw, Strict: o.strict}
	fmt.Fprintf(stdout, "labelling regimes (%s rule)\n", map[bool]string{true: "proxy", false: "hardware table, proxy fallback"}[hw == nil])
	for _, c := range []struct {
		name string
		jobs []regime.Job
	}{{o.sourceName, src}, {o.targetName, tgt}} {
		counts := rules.LabelAll(c.jobs)
		var parts []string
		for _, l := range regime.Labels() {
			parts = append(parts, fmt.Sprintf("%s=%d", l, counts[l]))
		}
		fmt.Fprintf(stdout, "  %-10s %6d jobs: %s\n", c.name, len(c.jobs), strings.Join(parts, " "))
	}
	if o.regime != "all" {
		l := regime.Label(o.regime)
		if !l.Valid() {
			return fmt.Errorf("-regime %q is not a regime", o.regime)
		}
		// In place: the jobs of other regimes are not needed again.
		notL := func(j regime.Job) bool { return j.Regime != l }
		src, tgt = slices.DeleteFunc(src, notL), slices.DeleteFunc(tgt, notL)
		fmt.Fprintf(stdout, "keeping regime %s: %d source and %d target jobs\n", l, len(src), len(tgt))
	}
	if len(src) == 0 || len(tgt) == 0 {
		// Nothing to compare: say so and leave the experiment log alone.
		return fmt.Errorf("%w: regime %s leaves %d %s jobs and %d %s jobs; nothing was written to the experiment log",
			overlap.ErrEmptyDomain, o.regime, len(src), o.sourceName, len(tgt), o.targetName)
	}
	if w := noGPUTelemetry(o, src, tgt); w != "" && !o.strict {
		warn(w)
	}

	var features []string
	var dropped []overlap.DroppedFeature
	if o.features != "" {
		for _, f := range strings.Split(o.features, ",") {
			features = append(features, strings.TrimSpace(f))
		}
		fmt.Fprintf(stdout, "features (from -features): %s\n", strings.Join(features, ", "))
		var bad []string
		for _, f := range features {
			if regime.Forbidden(f) {
				bad = append(bad, f)
			}
		}
		if len(bad) > 0 {
			w := fmt.Sprintf("the feature set holds %s, which the procedure forbids (%s): the proxy regime rule reads them, so the comparison partly compares regime labels",
				strings.Join(bad, ", "), strings.Join(regime.ForbiddenFeatures(), ", "))
			warn(w)
		}
		if o.featureSet == "" {
			o.featureSet = "custom"
		}
	} else {
		sc := regime.Screen(nil, []string{o.sourceName, o.targetName}, src, tgt)
		features = sc.Features
		for _, d := range sc.Dropped {
			fmt.Fprintf(stdout, "  dropping %s: %s\n", d.Name, d.Reason)
			dropped = append(dropped, overlap.DroppedFeature{Name: d.Name, Reason: d.Reason})
		}
		fmt.Fprintf(stdout, "safe features (the procedure's set: no missing value in either cluster, not constant): %s\n", strings.Join(features, ", "))
	}
	if o.featureSet == "" {
		o.featureSet = "safe"
	}

	x, y, err := stack(src, tgt, features)
	if err != nil {
		return err
	}
	// What the outputs need of the jobs after the fit; the jobs themselves
	// are let go before it (the -transfer model reads them after it), so
	// that the fit does not hold the tables too.
	refs := jobRefs(src, tgt)
	nSrc, nTgt := len(src), len(tgt)
	labelsAuth, labelsProxy := regime.Bases(src, tgt)
	if !o.transfer {
		src, tgt = nil, nil
	}
	opts := []overlap.Option{overlap.WithFeatureNames(features...)}
	if o.balanced {
		opts = append(opts, overlap.WithClassWeight(stats.ClassWeightBalanced))
	}
	if o.crossfit >= 2 {
		opts = append(opts, overlap.WithCrossFit(o.crossfit, o.seed))
	}
	if o.impute {
		opts = append(opts, overlap.WithImpute())
	}
	fmt.Fprintf(stdout, "fitting the domain classifier on %d jobs × %d features, band %v\n", len(y), len(features), band)
	res, err := overlap.Fit(x, y, band, opts...)
	if err != nil {
		// No classifier, so no report and no log row.
		return err
	}

	logPath := filepath.Join(o.out, "experiments.jsonl")
	log, err := readLog(logPath)
	if err != nil {
		return err
	}
	meta := overlap.Meta{Experiment: o.exp, Source: o.sourceName, Target: o.targetName,
		Regime: o.regime, FeatureSet: o.featureSet, Warnings: warnings, Dropped: dropped}
	meta.LabelsAuthoritative, meta.LabelsProxy = labelsAuth, labelsProxy
	meta.Provenance = res.NewProvenance()
	meta.Provenance.Command = o.command()
	for _, in := range inputs {
		in.Kept = nSrc
		if in.Role == "target" {
			in.Kept = nTgt
		}
		meta.Provenance.Inputs = append(meta.Provenance.Inputs, in)
	}
	if o.transfer {
		tr, err := transferEval(src, tgt, res, o.seed)
		if err != nil {
			return fmt.Errorf("transfer evaluation: %w", err)
		}
		meta.Transfer = tr
		t := tr.Result
		fmt.Fprintf(stdout, "transfer (%s): %s all %.4f [%.4f, %.4f], in band %.4f [%.4f, %.4f], out of band %.4f\n",
			tr.Model, t.Metric, t.All.Value, t.All.Lo, t.All.Hi, t.InBand.Value, t.InBand.Lo, t.InBand.Hi, t.OutOfBand.Value)
	}
	if meta.Experiment == "" {
		meta.Experiment = "E" + strconv.Itoa(len(log.Entries)+1)
	}

	// Diagnostics go before the report so that the report block has
	// exactly the reviewer's fields; report.json has them all.
	fmt.Fprintf(stdout, "cross-fitted AUC (%d folds): %.4f; source coverage %.4f (n=%d of %d); Kish ESS of source odds weights %.0f\n",
		res.CrossFitFolds, res.CrossFitAUC, res.SourceCoverage, res.NSourceInBand, res.NSource, res.ESS)
	fmt.Fprintf(stdout, "solver: %d Newton iterations, gradient norm %.2e, converged %v\n", res.Solver.Iterations, res.Solver.GradNorm, res.Solver.Converged)
	fmt.Fprintln(stdout)
	if err := res.WriteMarkdown(stdout, meta); err != nil {
		return err
	}
	fmt.Fprintln(stdout)

	var written []string
	write := func(name string, f func(io.Writer) error) error {
		path := filepath.Join(o.out, name)
		if err := writeFile(path, f); err != nil {
			return err
		}
		written = append(written, path)
		return nil
	}
	if err := write("report.md", func(w io.Writer) error { return res.WriteMarkdown(w, meta) }); err != nil {
		return err
	}
	if err := write("report.json", func(w io.Writer) error { return res.WriteJSON(w, meta) }); err != nil {
		return err
	}
	srcPNG, tgtPNG := safeName(o.sourceName), safeName(o.targetName)
	if srcPNG == tgtPNG {
		// Same name (e.g. a/jobs.csv and b/jobs.csv): keep both plots.
		srcPNG, tgtPNG = srcPNG+"_source", tgtPNG+"_target"
	}
	for _, d := range []struct {
		dom        int
		name, file string
	}{{overlap.Source, o.sourceName, srcPNG}, {overlap.Target, o.targetName, tgtPNG}} {
		path := filepath.Join(o.out, "propensity_"+d.file+".png")
		if err := cplot.Propensity(path, res, d.dom, d.name); err != nil {
			return err
		}
		written = append(written, path)
	}
	sweep, err := res.Sweep()
	if err != nil {
		return err
	}
	if err := write("sweep.csv", func(w io.Writer) error { return writeSweep(w, sweep, features) }); err != nil {
		return err
	}
	if err := write("propensity.csv", func(w io.Writer) error { return writePropensity(w, res, refs) }); err != nil {
		return err
	}
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if err := log.Append(f, res.Entry(meta)); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	written = append(written, logPath)
	if err := write("experiments.md", log.WriteTable); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "experiment log:")
	if err := log.WriteTable(stdout); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\nwrote:")
	for _, p := range written {
		fmt.Fprintln(stdout, "  "+p)
	}
	rss := "n/a"
	if b, ok := cputime.PeakRSS(); ok {
		rss = fmt.Sprintf("%.0f MB", float64(b)/1e6)
	}
	fmt.Fprintf(stdout, "done in %s, peak RSS %s\n", time.Since(start).Round(time.Millisecond), rss)
	return nil
}

// writeFile writes path through f as a stream, into a temporary file
// renamed over path when complete, so that a failed run leaves no
// half-written output.
func writeFile(path string, f func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename, a no-op
	bw := bufio.NewWriterSize(tmp, 1<<16)
	if err := f(bw); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func parseBand(s string) (overlap.Band, error) {
	lo, hi, ok := strings.Cut(s, ",")
	if !ok {
		return overlap.Band{}, fmt.Errorf("-band %q: want lo,hi", s)
	}
	l, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
	h, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
	if err := errors.Join(err1, err2); err != nil {
		return overlap.Band{}, fmt.Errorf("-band %q: %w", s, err)
	}
	b := overlap.Band{Lo: l, Hi: h}
	return b, b.Check()
}

// load returns the two clusters' jobs, a hardware table for them and the
// provenance of each input.
func load(o options, units regime.Units, stdout io.Writer, warn func(string)) (src, tgt []regime.Job, hw *regime.Hardware, inputs []overlap.Input, err error) {
	if (o.source == "") != (o.target == "") {
		return nil, nil, nil, nil, errors.New("give both -source and -target, or neither")
	}
	if o.source == "" {
		rng := rand.New(rand.NewPCG(o.seed, 7))
		hw = &regime.Hardware{Clusters: map[string]regime.Cluster{}}
		var out [2][]regime.Job
		for k, p := range []synth.ClusterProfile{synth.AnvilLike(), synth.ConteLike()} {
			fmt.Fprintf(stdout, "generating %d synthetic %s-like jobs\n", o.n, p.Name)
			rows := synth.JobTable(p, o.n, rng)
			out[k] = regime.Aggregate(toTable(rows), regime.Units{p.Name: p.TimelimitUnitSec})
			hw.Clusters[p.Name] = hardwareOf(p)
			role, name := "source", o.sourceName
			if k == 1 {
				role, name = "target", o.targetName
			}
			inputs = append(inputs, overlap.Input{Role: role, Rows: len(out[k]), Samples: len(rows),
				Name: fmt.Sprintf("synthetic %s (internal/synth %s, n=%d, seed %d)", name, map[int]string{0: "AnvilLike", 1: "ConteLike"}[k], o.n, o.seed)})
		}
		return out[0], out[1], hw, inputs, nil
	}
	keep := keptMetrics(o.features)
	for _, f := range []struct {
		role, path, name string
		dst              *[]regime.Job
	}{{"source", o.source, o.sourceName, &src}, {"target", o.target, o.targetName, &tgt}} {
		jobs, in, err := readJobs(stdout, f.path, f.name, units, keep, warn)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		in.Role = f.role
		*f.dst = jobs
		inputs = append(inputs, in)
	}
	return src, tgt, regime.KnownHardware(), inputs, nil
}

// keptMetrics returns the metrics the jobs read from files keep: those the
// proxy rule reads (gpu, memused) and those -features names
// (value_<metric>_cnt, _sum or _max).
func keptMetrics(features string) []string {
	keep := []string{"gpu", "memused"}
	for _, f := range strings.Split(features, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		rest, ok := strings.CutPrefix(f, regime.ValuePrefix)
		if i := strings.LastIndexByte(rest, '_'); ok && i > 0 && !slices.Contains(keep, rest[:i]) {
			keep = append(keep, rest[:i])
		}
	}
	return keep
}

// parseUnits reads -units (cluster=seconds,...) on top of
// regime.DefaultUnits.
func parseUnits(s string) (regime.Units, error) {
	u := regime.DefaultUnits()
	if strings.TrimSpace(s) == "" {
		return u, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		sec, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || err != nil || !(sec > 0) || math.IsInf(sec, 0) {
			return nil, fmt.Errorf("-units %q: want cluster=seconds with seconds > 0", s)
		}
		u[strings.TrimSpace(k)] = sec
	}
	return u, nil
}

func nameOr(name, path string) string {
	if name != "" {
		return name
	}
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

// readJobs reads one cluster's job table as a stream, hashing the file as
// it goes: a Parquet or CSV telemetry table (aggregated to jobs row by row,
// only the metrics in keep), or a Stampede accounting CSV when the header
// starts with jobID. warn receives a line for columns the reader does not
// know (ignored).
func readJobs(stdout io.Writer, path, cluster string, units regime.Units, keep []string, warn func(string)) ([]regime.Job, overlap.Input, error) {
	fmt.Fprintf(stdout, "reading %s\n", path)
	in := overlap.Input{Name: path}
	f, err := os.Open(path)
	if err != nil {
		return nil, in, err
	}
	defer f.Close()
	h := sha256.New()
	cfg := regime.ReadConfig{Cluster: cluster, Units: units, Metrics: keep}
	var t *regime.JobTable
	if strings.EqualFold(filepath.Ext(path), ".parquet") {
		size, err := io.Copy(h, f)
		if err != nil {
			return nil, in, err
		}
		if t, err = regime.ReadJobsParquet(f, size, path, cfg); err != nil {
			return nil, in, err
		}
	} else {
		br := bufio.NewReaderSize(io.TeeReader(f, h), 1<<16)
		head, _ := br.Peek(len("\ufeffjobID,"))
		if bytes.HasPrefix(bytes.TrimPrefix(head, []byte("\ufeff")), []byte("jobID,")) {
			jobs, err := regime.ReadStampede(br, path)
			if err != nil {
				return nil, in, err
			}
			in.SHA256, in.Rows, in.Samples = fmt.Sprintf("%x", h.Sum(nil)), len(jobs), len(jobs)
			return jobs, in, nil
		}
		if t, err = regime.ReadJobsCSV(br, path, cfg); err != nil {
			return nil, in, err
		}
		// The reader stops at the end of the data; hash anything after it.
		if _, err := io.Copy(h, f); err != nil {
			return nil, in, err
		}
	}
	if len(t.Unknown) > 0 {
		warn(fmt.Sprintf("%s: columns ignored, not in the accepted schema (regime.Schema, docs/overlap.md): %s",
			path, strings.Join(t.Unknown, ", ")))
	}
	fmt.Fprintf(stdout, "  %d rows, %d jobs\n", t.Rows, len(t.Jobs))
	in.SHA256, in.Rows, in.Samples = fmt.Sprintf("%x", h.Sum(nil)), len(t.Jobs), t.Rows
	return t.Jobs, in, nil
}

func toTable(rows []synth.JobsRow) *regime.Table {
	t := &regime.Table{Metrics: []string{"cpuuser", "gpu", "memused"}, Rows: make([]regime.Row, len(rows))}
	for i, r := range rows {
		t.Rows[i] = regime.Row{JobID: r.JID, Cluster: r.Cluster, Queue: r.Queue, Host: r.Host, User: r.User,
			ExitCode: r.ExitCode, Time: r.Time, Submit: r.Submit, Start: r.Start, End: r.End,
			Timelimit: r.Timelimit, NHosts: r.NHosts, NCores: r.NCores, Values: []float64{r.CPUUser, r.GPU, r.MemUsed}}
	}
	return t
}

// hardwareOf turns a synthetic profile into its hardware-table entry, so
// the synthetic jobs get authoritative labels. Anvil-like GPU nodes have
// exactly 512 GB and are marked gpu_standard, as regime.KnownHardware does.
func hardwareOf(p synth.ClusterProfile) regime.Cluster {
	c := regime.Cluster{Partitions: map[string]regime.Node{}}
	for _, pt := range p.Partitions {
		n := regime.Node{NodeType: pt.Name, NodeCores: pt.NodeCores, NodeMemoryGB: pt.NodeMemoryGB, GPUCountPerNode: pt.GPUs}
		if pt.GPUs > 0 && pt.NodeMemoryGB == regime.DefaultLargeMemGB {
			n.WorkloadRegime = regime.GPUStandard
		}
		c.Partitions[pt.Name] = n
	}
	return c
}

// stack returns the feature matrix of the source jobs followed by the
// target jobs, and the domain labels.
func stack(src, tgt []regime.Job, features []string) (*mat.Dense, []int, error) {
	n := len(src) + len(tgt)
	if n == 0 || len(features) == 0 {
		return &mat.Dense{}, nil, nil // Fit reports the missing data
	}
	y := make([]int, n)
	for i := len(src); i < n; i++ {
		y[i] = overlap.Target
	}
	xs, err := regime.Matrix(src, features)
	if err != nil {
		return nil, nil, err
	}
	xt, err := regime.Matrix(tgt, features)
	if err != nil {
		return nil, nil, err
	}
	x := mat.NewDense(n, len(features), nil)
	x.Stack(xs, xt)
	return x, y, nil
}

// noGPUTelemetry returns a warning when proxy-labelled jobs had no GPU
// sample at all: the lenient proxy rule then calls them CPU jobs on the
// absence of evidence (a table without a value_gpu column labels every job
// cpu_*), which a reader of the report should know.
func noGPUTelemetry(o options, clusters ...[]regime.Job) string {
	var parts []string
	total := 0
	for c, jobs := range clusters {
		proxy, none := 0, 0
		for i := range jobs {
			if jobs[i].Basis != regime.Proxy {
				continue
			}
			proxy++
			if g, _ := jobs[i].Metric("gpu"); g.Cnt == 0 {
				none++
			}
		}
		if proxy > 0 {
			name := []string{o.sourceName, o.targetName}[min(c, 1)]
			parts = append(parts, fmt.Sprintf("%d of %s's %d", none, name, proxy))
			total += none
		}
	}
	if total == 0 {
		return ""
	}
	return fmt.Sprintf("proxy-labelled jobs without any GPU sample (value_gpu): %s; the proxy rule reads missing GPU telemetry as a CPU-only node, so their regime rests on absent data (-strict labels them unknown)",
		strings.Join(parts, ", "))
}

func readLog(path string) (*overlap.Log, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return &overlap.Log{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return overlap.ReadLog(bufio.NewReader(f))
}

func writeSweep(w io.Writer, rows []overlap.SweepRow, features []string) error {
	cw := csv.NewWriter(w)
	head := []string{"lo", "hi", "target_coverage", "n_target_in_band", "source_coverage", "n_source_in_band"}
	for _, f := range features {
		head = append(head, "ks_"+f)
	}
	cw.Write(head)
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
	for _, r := range rows {
		rec := []string{g(r.Band.Lo), g(r.Band.Hi), g(r.Coverage), strconv.Itoa(r.NTargetInBand), g(r.SourceCoverage), strconv.Itoa(r.NSourceInBand)}
		for _, k := range r.KS {
			if math.IsNaN(k.Statistic) {
				rec = append(rec, "")
			} else {
				rec = append(rec, g(k.Statistic))
			}
		}
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// jobRef is what propensity.csv needs of a compared job.
type jobRef struct {
	id, cluster, domain string
	regime              regime.Label
}

// jobRefs returns the source jobs' references followed by the target's,
// in the rows' order of stack.
func jobRefs(src, tgt []regime.Job) []jobRef {
	refs := make([]jobRef, 0, len(src)+len(tgt))
	for _, d := range []struct {
		name string
		jobs []regime.Job
	}{{"source", src}, {"target", tgt}} {
		for i := range d.jobs {
			j := &d.jobs[i]
			refs = append(refs, jobRef{j.ID, j.Cluster, d.name, j.Regime})
		}
	}
	return refs
}

func writePropensity(w io.Writer, res *overlap.Result, refs []jobRef) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"job_id", "cluster", "domain", "regime", "propensity", "in_band"})
	for i, p := range res.Propensity {
		r := &refs[i]
		cw.Write([]string{r.id, r.cluster, r.domain, string(r.regime), strconv.FormatFloat(p, 'g', 10, 64), strconv.FormatBool(res.InBand[i])})
	}
	cw.Flush()
	return cw.Error()
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ' ' || r == ':' {
			return '_'
		}
		return r
	}, s)
}

// transferFeatures are the allocation features the worked transfer model
// reads: what a job asks for, known at submission.
var transferFeatures = []string{"ncores", "nhosts", "timelimit_sec"}

// transferEval fits a logistic model of "ran over an hour" (runtime_sec >
// 3600) from the allocation features on the source jobs,
// applies it to the target jobs and scores it with EvaluateTransfer, the
// target rows' in-band flags from the domain classifier.
func transferEval(src, tgt []regime.Job, res *overlap.Result, seed uint64) (*overlap.TransferReport, error) {
	label := func(jobs []regime.Job) ([]float64, []int, error) {
		yf := make([]float64, len(jobs))
		yi := make([]int, len(jobs))
		for i := range jobs {
			v, _ := jobs[i].Feature("runtime_sec")
			if math.IsNaN(v) {
				return nil, nil, fmt.Errorf("job %s has no runtime_sec", jobs[i].ID)
			}
			if v > 3600 {
				yf[i], yi[i] = 1, 1
			}
		}
		return yf, yi, nil
	}
	xs, err := regime.Matrix(src, transferFeatures)
	if err != nil {
		return nil, err
	}
	xt, err := regime.Matrix(tgt, transferFeatures)
	if err != nil {
		return nil, err
	}
	_, ys, err := label(src)
	if err != nil {
		return nil, err
	}
	truth, _, err := label(tgt)
	if err != nil {
		return nil, err
	}
	std, err := stats.FitStandardizer(xs)
	if err != nil {
		return nil, err
	}
	zs := std.Transform(nil, xs)
	model, err := stats.LogisticRegression(zs, ys, stats.LogisticConfig{C: 1})
	if err != nil {
		return nil, err
	}
	pred := model.PredictProba(nil, std.Transform(nil, xt))
	// The target rows come after the source rows in the fitted result.
	inBand := res.InBand[len(src):]
	r, err := overlap.EvaluateTransfer(truth, pred, inBand, overlap.AUCMetric, overlap.TransferConfig{Seed: seed})
	if err != nil {
		return nil, err
	}
	return &overlap.TransferReport{
		Model:  "logistic model of runtime_sec > 3600 from " + strings.Join(transferFeatures, ", ") + ", fitted on the source",
		Result: r,
	}, nil
}
