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
// _target are appended when the two names coincide), density.png (both
// domains' propensity densities, the band shaded), balance.png (|SMD| per
// feature, all jobs and in band), bandwidth.png (coverage against band
// width), sweep.csv
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

	"github.com/crosscluster/crosscluster/internal/synth"
	"github.com/crosscluster/crosscluster/overlap"
	cplot "github.com/crosscluster/crosscluster/plot"
	"github.com/crosscluster/crosscluster/regime"
	"github.com/crosscluster/crosscluster/stats"
)

type options struct {
	out, source, target, sourceName, targetName string
	regime, band, exp, featureSet, features     string
	units, clusters                             string
	n, crossfit                                 int
	seed                                        uint64
	balanced, proxy, strict, impute, transfer   bool
	halves                                      bool
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
	fs.StringVar(&o.clusters, "clusters", "", "compare k clusters pairwise instead: synth (Anvil-, Conte- and Stampede-like) or job tables [name=]path,... (e.g. -clusters synth); writes pairwise.csv, pairwise.md, pairwise.png")
	fs.BoolVar(&o.halves, "halves", false, "with -clusters: split each cluster at its median submit time into name-1 and name-2 (e.g. two Stampede months as four periods) (e.g. -halves)")
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
	do := run
	if o.clusters != "" {
		do = runMany
	}
	if err := do(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "overlap:", err)
		os.Exit(1)
	}
}

// run does the work; everything it prints goes to stdout.
func run(o options, stdout io.Writer) error {
	start := time.Now()
	band, units, err := prepare(o)
	if err != nil {
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
	src, tgt, hw, err := load(o, units, stdout, warn)
	if err != nil {
		return err
	}
	inputs, err := describeInputs(o, len(src), len(tgt))
	if err != nil {
		return err
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
		src, tgt = regime.Filter(src, l), regime.Filter(tgt, l)
		fmt.Fprintf(stdout, "keeping regime %s: %d source and %d target jobs\n", l, len(src), len(tgt))
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
	if len(src) == 0 || len(tgt) == 0 {
		// Nothing to compare: say so and leave the experiment log alone.
		return fmt.Errorf("%w: regime %s leaves %d %s jobs and %d %s jobs; nothing was written to the experiment log",
			overlap.ErrEmptyDomain, o.regime, len(src), o.sourceName, len(tgt), o.targetName)
	}

	x, y, err := stack(src, tgt, features)
	if err != nil {
		return err
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
	meta.LabelsAuthoritative, meta.LabelsProxy = regime.Bases(src, tgt)
	meta.Provenance = res.NewProvenance()
	meta.Provenance.Command = o.command()
	for _, in := range inputs {
		in.Kept = len(src)
		if in.Role == "target" {
			in.Kept = len(tgt)
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
		var buf bytes.Buffer
		if err := f(&buf); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
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
	for _, fig := range []struct {
		name string
		draw func(string) error
	}{
		{"density.png", func(p string) error { return cplot.Densities(p, res, o.sourceName, o.targetName) }},
		{"balance.png", func(p string) error { return cplot.Balance(p, res) }},
		{"bandwidth.png", func(p string) error { return cplot.BandWidth(p, res, sweep, o.sourceName, o.targetName) }},
	} {
		path := filepath.Join(o.out, fig.name)
		if err := fig.draw(path); err != nil {
			return err
		}
		written = append(written, path)
	}
	if err := write("sweep.csv", func(w io.Writer) error { return writeSweep(w, sweep, features) }); err != nil {
		return err
	}
	if err := write("propensity.csv", func(w io.Writer) error { return writePropensity(w, res, src, tgt, o) }); err != nil {
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
	fmt.Fprintf(stdout, "done in %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// prepare parses -band and -units and makes the output directory.
func prepare(o options) (overlap.Band, regime.Units, error) {
	band, err := parseBand(o.band)
	if err != nil {
		return band, nil, err
	}
	units, err := parseUnits(o.units)
	if err != nil {
		return band, nil, err
	}
	return band, units, os.MkdirAll(o.out, 0o755)
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

// load returns the two clusters' jobs and a hardware table for them.
func load(o options, units regime.Units, stdout io.Writer, warn func(string)) (src, tgt []regime.Job, hw *regime.Hardware, err error) {
	if (o.source == "") != (o.target == "") {
		return nil, nil, nil, errors.New("give both -source and -target, or neither")
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
		}
		return out[0], out[1], hw, nil
	}
	if src, err = readJobs(stdout, o.source, o.sourceName, units, warn); err != nil {
		return nil, nil, nil, err
	}
	if tgt, err = readJobs(stdout, o.target, o.targetName, units, warn); err != nil {
		return nil, nil, nil, err
	}
	return src, tgt, regime.KnownHardware(), nil
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

// readJobs reads a Parquet or CSV telemetry table, or a Stampede
// accounting CSV when the header starts with jobID.
// readJobs reads one cluster's job table; warn receives a line for columns
// the reader does not know (ignored).
func readJobs(stdout io.Writer, path, cluster string, units regime.Units, warn func(string)) ([]regime.Job, error) {
	fmt.Fprintf(stdout, "reading %s\n", path)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if strings.EqualFold(filepath.Ext(path), ".parquet") {
		t, err := regime.ReadParquet(bytes.NewReader(b), int64(len(b)), path, cluster)
		if err != nil {
			return nil, err
		}
		unknownColumns(path, t, warn)
		return regime.Aggregate(t, units), nil
	}
	if bytes.HasPrefix(bytes.TrimPrefix(b, []byte("\ufeff")), []byte("jobID,")) {
		return regime.ReadStampede(bytes.NewReader(b), path)
	}
	t, err := regime.ReadCSV(bytes.NewReader(b), path, cluster)
	if err != nil {
		return nil, err
	}
	unknownColumns(path, t, warn)
	return regime.Aggregate(t, units), nil
}

// unknownColumns warns about the table's columns the reader ignored.
func unknownColumns(path string, t *regime.Table, warn func(string)) {
	if len(t.Unknown) > 0 {
		warn(fmt.Sprintf("%s: columns ignored, not in the accepted schema (regime.Schema, docs/overlap.md): %s",
			path, strings.Join(t.Unknown, ", ")))
	}
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

func stack(src, tgt []regime.Job, features []string) (*mat.Dense, []int, error) {
	all := slices.Concat(src, tgt)
	if len(all) == 0 || len(features) == 0 {
		return &mat.Dense{}, nil, nil // Fit reports the missing data
	}
	y := make([]int, len(all))
	for i := len(src); i < len(all); i++ {
		y[i] = overlap.Target
	}
	x, err := regime.Matrix(all, features)
	return x, y, err
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

func writePropensity(w io.Writer, res *overlap.Result, src, tgt []regime.Job, o options) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"job_id", "cluster", "domain", "regime", "propensity", "in_band"})
	for i, p := range res.Propensity {
		j, dom := src, "source"
		k := i
		if i >= len(src) {
			j, dom, k = tgt, "target", i-len(src)
		}
		cw.Write([]string{j[k].ID, j[k].Cluster, dom, string(j[k].Regime), strconv.FormatFloat(p, 'g', 10, 64), strconv.FormatBool(res.InBand[i])})
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

// describeInputs records the two inputs with their SHA-256 (files) or the
// generator's settings (synthetic clusters) and the jobs read.
func describeInputs(o options, nSrc, nTgt int) ([]overlap.Input, error) {
	if o.source == "" {
		return []overlap.Input{
			{Role: "source", Name: fmt.Sprintf("synthetic %s (internal/synth AnvilLike, n=%d, seed %d)", o.sourceName, o.n, o.seed), Rows: nSrc},
			{Role: "target", Name: fmt.Sprintf("synthetic %s (internal/synth ConteLike, n=%d, seed %d)", o.targetName, o.n, o.seed), Rows: nTgt},
		}, nil
	}
	var out []overlap.Input
	for _, f := range []struct {
		role, path string
		n          int
	}{{"source", o.source, nSrc}, {"target", o.target, nTgt}} {
		b, err := os.ReadFile(f.path)
		if err != nil {
			return nil, err
		}
		out = append(out, overlap.Input{Role: f.role, Name: f.path, SHA256: fmt.Sprintf("%x", sha256.Sum256(b)), Rows: f.n})
	}
	return out, nil
}
